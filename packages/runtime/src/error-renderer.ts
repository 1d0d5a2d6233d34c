import type { Logger } from 'pino';
import { StatusError, toStatusError } from '@chain/errors';
import type { Exchange } from './exchange';
import { sendError } from './respond';

/**
 * Any thrown value as a catalogue error. An error that carries an HTTP 4xx `status` (what
 * Express middleware a user adds throws: a body it cannot parse, a body too large) becomes our
 * row for it; anything else unknown is ERR10010, with nothing of it in the answer.
 */
export function asStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  const status = (err as { status?: unknown; statusCode?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new StatusError('ERR10068', [], { cause: err });
    if (status === 408) return new StatusError('ERR20009', [], { cause: err });
    return new StatusError('ERR20007', [], { cause: err });
  }
  return toStatusError(err);
}

/** The messages of an error and its causes, joined: one line, no stack. */
export function reasonOf(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, depth = 0; e && depth < 4; depth++) {
    if (!(e instanceof Error)) {
      parts.push(typeof e === 'string' ? e.slice(0, 200) : 'a non-Error value');
      break;
    }
    if (e.message) parts.push(e.message);
    e = e.cause;
  }
  return parts.join(': ');
}

/**
 * The one error renderer of every service: the catalogue body with its status and headers.
 * Logging: an unexpected failure (ERR10010) with its stack, for the developer; an upstream
 * failure (token server, key server, downstream) as one line with the reason; refused
 * credentials are logged by the security stage, not again here.
 */
export function createErrorRenderer(logger: Logger): (x: Exchange, err: unknown) => void {
  return (x, err) => {
    const error = asStatusError(err);
    const where = {
      code: error.code,
      method: x.method,
      path: x.path.slice(0, 200),
      correlationId: x.context.trace.correlationId,
      traceId: x.context.trace.traceId,
    };
    if (error.code === 'ERR10010') {
      logger.error({ ...where, err: error.cause ?? err }, 'request failed');
    } else if (error.cause !== undefined && error.statusCode !== 401 && error.statusCode !== 403) {
      // The service's own token or an upstream it needs failed: worth an operator's attention.
      const upstream = error.statusCode >= 500 || error.code === 'ERR10009';
      const log = upstream ? logger.warn : logger.info;
      log.call(logger, { ...where, reason: reasonOf(error.cause) }, error.body.description);
    }
    if (x.res.headersSent) {
      // Too late for an error body: cut the connection so the client sees the answer is broken.
      x.res.destroy();
      return;
    }
    sendError(x.res, error);
  };
}
