import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { auditRecord, type AuditLogger } from './audit-log';
import { verifiedCallerOf } from './authorizer';
import { createSecurity, type SecurityOptions } from './create-security';
import type { MockTokenIssuer } from './mock-jwt';
import { applyPassThrough } from './request-rules';

export interface SecurityMiddlewareOptions extends SecurityOptions {
  /** Scopes the matched operation requires (from the service's OpenAPI spec). */
  requiredScopes?: (req: Request, res: Response) => readonly string[] | undefined;
  /** Receives the audit line of each verified request. */
  logger?: AuditLogger;
}

export interface SecurityHandlers {
  /** Verifies each request; on success `res.locals.auth` holds the AuthInfo. */
  middleware: RequestHandler;
  /** `POST /oauth2/token` of `enableMockJwt`; mount it before the OpenAPI router. */
  mockTokenRouter?: Router;
}

/**
 * The Express face of the security package: maps a request to the authorizer and its result to
 * `res.locals.auth` and the audit log; errors go to the one error renderer through `next`.
 */
export function createSecurityHandlers(options: SecurityMiddlewareOptions): SecurityHandlers {
  const { config, requiredScopes, logger } = options;
  const { authorize, mockIssuer } = createSecurity(options);
  const mockTokenRouter = mockIssuer ? mockTokenRoutes(mockIssuer) : undefined;
  const passThrough = config.passThroughClaims;
  if (!authorize) {
    // No verified claims: a caller's own pass-through headers are still removed.
    const strip: RequestHandler = (req, _res, next) => {
      applyPassThrough(req.headers, passThrough);
      next();
    };
    return { middleware: strip, mockTokenRouter };
  }

  const middleware: RequestHandler = (req, res, next) => {
    applyPassThrough(req.headers, passThrough);
    authorize({
      authorization: req.headers.authorization,
      scopeToken: req.headers['x-scope-token'],
      requiredScopes: requiredScopes ? requiredScopes(req, res) : [],
      path: req.path,
    }).then(
      (authorized) => {
        if (!authorized) return next(); // skipPathPrefixes
        const { auth, token } = authorized;
        applyPassThrough(req.headers, passThrough, auth.passThrough);
        res.locals.auth = auth;
        const record = logger && auditRecord(config, token, auth);
        if (record) {
          const trace = res.locals.trace as { correlationId?: string } | undefined;
          logger!.info({ ...record, correlationId: trace?.correlationId }, 'jwt verified');
        }
        next();
      },
      (err: unknown) => {
        // A scope mismatch still tells who the (verified) caller was, for metrics.
        const caller = verifiedCallerOf(err);
        if (caller) res.locals.auth = caller;
        next(err);
      },
    );
  };
  return { middleware, mockTokenRouter };
}

/** The verification middleware alone (see createSecurityHandlers). */
export function createSecurityMiddleware(options: SecurityMiddlewareOptions): RequestHandler {
  return createSecurityHandlers(options).middleware;
}

function mockTokenRoutes(issuer: MockTokenIssuer): Router {
  const router = express.Router();
  router.post(
    '/oauth2/token',
    express.urlencoded({ extended: false, limit: '4kb' }),
    (req, res) => {
      const form = (req.body ?? {}) as Record<string, unknown>;
      const scope = typeof form.scope === 'string' ? form.scope.split(/\s+/).filter(Boolean) : [];
      res.set('Cache-Control', 'no-store');
      res.json(
        issuer.issue({
          clientId: basicUser(req.headers.authorization) ?? stringOf(form.client_id),
          userId: stringOf(form.user_id),
          scopes: scope,
        }),
      );
    },
  );
  return router;
}

function basicUser(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!match) return undefined;
  const user = Buffer.from(match[1], 'base64').toString('utf8').split(':')[0];
  return user || undefined;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
