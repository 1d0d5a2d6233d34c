import type { RequestHandler, Response } from 'express';
import { StatusError } from '@chain/security';
import { coerceParams } from './params';
import type { OpenApiSpec, Operation } from './spec';

export interface MatchedOperation {
  operation: Operation;
  params: Record<string, string | number | boolean>;
}

const MAX_ECHOED_PATH = 200;

/**
 * Routes every request through the spec: unknown path ERR10007, unknown method ERR10008,
 * ill-typed path parameter ERR11004; on a match `res.locals.operation` holds the operation
 * and its typed parameters for the layers after it (security, metrics, the handler).
 */
export function openapiMiddleware(spec: OpenApiSpec): RequestHandler {
  return (req, res, next) => {
    const path = req.path;
    const found = spec.match(req.method, path);
    const echoed = path.length > MAX_ECHOED_PATH ? path.slice(0, MAX_ECHOED_PATH) + '…' : path;
    if (found.kind === 'no-path') return next(new StatusError('ERR10007', [echoed]));
    if (found.kind === 'no-method') {
      return next(new StatusError('ERR10008', [req.method, echoed]));
    }
    try {
      const matched: MatchedOperation = {
        operation: found.operation,
        params: coerceParams(found.operation.params, found.params),
      };
      res.locals.operation = matched;
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** The operation the spec matched for this request, if any. */
export function matchedOperation(res: Response): MatchedOperation | undefined {
  return res.locals.operation as MatchedOperation | undefined;
}
