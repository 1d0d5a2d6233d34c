import type { Logger } from 'pino';
import { STATUS, StatusError, toStatusError } from '@chain/errors';
import type { Exchange } from './exchange.js';
import { sendError } from './respond.js';

/** A 4xx `status` (thrown by Express middleware a service adds) becomes our row for it. */
export function asStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = status === 413 ? 'ERR10068' : status === 408 ? 'ERR20009' : 'ERR20007';
    return new StatusError(code, [], { cause: err });
  }
  return toStatusError(err);
}

export function reasonOf(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, depth = 0; e && depth < 4; depth++) {
    if (!(e instanceof Error)) {
      parts.push(typeof e === 'string' ? e.slice(0, 200) : 'a non-Error value');
      break;
    }
    // A wrapper that repeats its cause's message (a socket error's) says it once.
    if (e.message && !parts.at(-1)?.endsWith(e.message)) parts.push(e.message);
    e = e.cause;
  }
  return parts.join(': ');
}

/** Refused credentials are logged by the security stage, not again here. */
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
    } else if (error.cause !== undefined && !STATUS[error.code].challenge) {
      const upstream = error.statusCode >= 500 || error.code === 'ERR10009';
      const log = upstream ? logger.warn : logger.info;
      log.call(logger, { ...where, reason: reasonOf(error.cause) }, error.body.description);
    }
    // Too late for an error body: cut the connection so the client sees the answer is broken.
    if (x.res.headersSent) x.res.destroy();
    else sendError(x.res, error);
  };
}
