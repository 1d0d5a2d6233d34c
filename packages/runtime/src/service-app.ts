import express, { type Express, type Router } from 'express';
import type { Logger } from 'pino';
import { matchedOperation, openapiMiddleware } from '@chain/openapi';
import { createHttpsAgent, createKeyClient } from '@chain/oauth-client';
import { createSecurityHandlers, StatusError, type KeyResolver } from '@chain/security';
import { createMetrics, type Metrics } from '@chain/metrics';
import { correlationMiddleware } from './correlation';
import { errorHandler } from './error-handler';
import type { ServiceConfig } from './service-config';

export interface ServiceAppOptions {
  config: ServiceConfig;
  logger: Logger;
  /** The service's own handlers; they run after the spec and security checks passed. */
  routes: (router: Router) => void;
}

export interface ServiceApp {
  app: Express;
  metrics: Metrics;
}

/**
 * The request pipeline every service shares, in light-4j's handler order:
 * correlation -> metrics -> /health, /metrics -> OpenAPI routing -> security -> handler -> errors.
 * Never listens: tests drive the app with supertest, `startService` listens.
 */
export function createServiceApp({ config, logger, routes }: ServiceAppOptions): ServiceApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  const metrics = createMetrics(config.metrics, {
    serviceId: config.server.serviceId,
    logger,
    endpointOf: (_req, res) => matchedOperation(res)?.operation.endpoint ?? 'unknown',
    clientIdOf: (_req, res) =>
      (res.locals.auth as { clientId?: string } | undefined)?.clientId ?? 'unknown',
  });

  app.use(correlationMiddleware());
  app.use(metrics.middleware);
  app.get('/health', (_req, res) => {
    res.json({ status: 'UP', serviceId: config.server.serviceId });
  });
  app.get('/metrics', metrics.prometheus);

  const security = createSecurityHandlers({
    config: config.security,
    logger,
    resolveKey: keyResolver(config),
    keyPolicy: { timeoutMs: config.client.request.timeout },
    requiredScopes: (_req, res) => matchedOperation(res)?.operation.scopes,
  });
  // enableMockJwt: POST /oauth2/token, outside the spec.
  if (security.mockTokenRouter) app.use(security.mockTokenRouter);
  app.use(openapiMiddleware(config.spec));
  app.use(security.middleware);

  const router = express.Router();
  routes(router);
  app.use(router);

  // In the spec but not handled by the service.
  app.use((req, _res, next) => next(new StatusError('ERR10007', [req.path])));
  app.use(errorHandler(logger));
  return { app, metrics };
}

/** Unknown kids go to the key distribution server of client.yml `oauth.key`, when one is set. */
function keyResolver(config: ServiceConfig): KeyResolver | undefined {
  const { key } = config.client.oauth;
  if (!config.security.enableVerifyJwt || !key.server_url) return undefined;
  return createKeyClient({
    key,
    secret: config.secret.keyClientSecret,
    httpsAgent: createHttpsAgent(config.client.tls),
    timeoutMs: config.client.request.timeout,
  });
}
