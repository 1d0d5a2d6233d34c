import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { StatusError, type ErrorBody, toStatusError } from '@chain/security';

/** Writes a catalogue error: exact status, its headers and `Content-Type: application/json`. */
export function sendError(res: Response, error: StatusError): void {
  sendBody(res, error.body, error.headers);
}

export function sendBody(
  res: Response,
  body: ErrorBody,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.status(body.statusCode);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

/**
 * The one error renderer: a StatusError answers its catalogue row; Express's own client errors
 * (bad JSON, body too large, bad URL encoding) become ERR11005; anything else is ERR10010 with
 * nothing of it in the answer and the whole of it in the log.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    let error: StatusError;
    const status = (err as { status?: unknown; statusCode?: unknown } | null)?.status;
    if (err instanceof StatusError) {
      error = err;
    } else if (typeof status === 'number' && status >= 400 && status < 500) {
      error = new StatusError('ERR11005', ['The request cannot be parsed'], { cause: err });
    } else {
      error = toStatusError(err);
    }
    if (error.statusCode >= 500) {
      logger.error(
        { err: error.cause ?? err, code: error.code, method: req.method, path: req.path },
        'request failed',
      );
    } else if (error.cause && error.statusCode >= 400) {
      logger.warn({ err: error.cause, code: error.code, path: req.path }, error.body.description);
    }
    sendError(res, error);
  };
}
