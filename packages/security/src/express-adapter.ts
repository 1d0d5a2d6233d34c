import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { extractBearer } from './bearer';
import type { SecurityConfig } from './security-config';

export interface SecurityMiddlewareOptions {
  config: SecurityConfig;
  /** Scopes the matched operation requires (from the service's OpenAPI spec). */
  requiredScopes?: (req: Request, res: Response) => readonly string[] | undefined;
}

/**
 * The Express face of the security package. With `enableVerifyJwt: false` it passes every
 * request through; with it on, a request without a bearer token is refused with ERR10002.
 */
export function createSecurityMiddleware(options: SecurityMiddlewareOptions): RequestHandler {
  const { config } = options;
  if (!config.enableVerifyJwt) return (_req, _res, next) => next();
  return (req: Request, _res: Response, next: NextFunction) => {
    try {
      extractBearer(req.headers.authorization);
      next();
    } catch (err) {
      next(err);
    }
  };
}
