import express, { type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ConfigError } from '@chain/config';
import { matchedOperation, openapiMiddleware } from '@chain/openapi';
import { clientSecrets, createHttpsAgent, createKeyClient } from '@chain/oauth-client';
import { createSecurityHandlers, StatusError, type KeySource } from '@chain/security';
import { createMetrics, type Metrics } from '@chain/metrics';
import { correlationMiddleware } from './correlation';
import { errorHandler } from './error-handler';
import { pipeline, type NodeHandler } from './pipeline';
import type { ServiceConfig } from './service-config';

/** Where a service registers its handlers: Express-style paths (`/v2/pet/:petId`). */
export interface Routes {
  get(path: string, handler: RequestHandler): void;
  post(path: string, handler: RequestHandler): void;
  put(path: string, handler: RequestHandler): void;
  delete(path: string, handler: RequestHandler): void;
  patch(path: string, handler: RequestHandler): void;
}

export interface ServiceAppOptions {
  config: ServiceConfig;
  logger: Logger;
  /** The service's own handlers; they run after the spec and security checks passed. */
  routes: (routes: Routes) => void;
}

export interface ServiceApp {
  /** A Node request listener: `https.createServer(SERVER_CLASSES, app)`, or supertest's `request(app)`. */
  app: NodeHandler;
  metrics: Metrics;
}

/**
 * The request pipeline every service shares, in light-4j's handler order:
 * correlation -> metrics -> /health, /metrics -> OpenAPI routing -> security -> handler -> errors.
 * Handlers are found by their OpenAPI operation (`/v2/pet/{petId}@get`), as light-4j's
 * handler.yml maps endpoints to handlers. Never listens: tests drive the app with supertest,
 * `startService` listens.
 */
export function createServiceApp({ config, logger, routes }: ServiceAppOptions): ServiceApp {
  const metrics = createMetrics(config.metrics, {
    serviceId: config.server.serviceId,
    logger,
    endpointOf: (_req, res) => matchedOperation(res)?.operation.endpoint ?? 'unknown',
    clientIdOf: (_req, res) =>
      (res.locals.auth as { clientId?: string } | undefined)?.clientId ?? 'unknown',
    prometheus: config.prometheus,
  });
  const health = JSON.stringify({ status: 'UP', serviceId: config.server.serviceId });

  const { key } = config.client.oauth;
  const security = createSecurityHandlers({
    config: config.security,
    logger,
    keySource: keySource(config),
    keyPolicy: { timeoutMs: config.client.request.timeout },
    claims: { audience: key.audience, issuer: key.issuer },
    events: logger,
    requiredScopes: (_req, res) => matchedOperation(res)?.operation.scopes,
  });

  const handlers = registerRoutes(config, routes);
  const stages: RequestHandler[] = [
    correlationMiddleware(),
    metrics.middleware,
    // Outside the spec and the security checks.
    (req, res, next) => {
      if (req.method === 'GET' && req.path === '/health') {
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.send(health);
      } else if (req.method === 'GET' && req.path === '/metrics') {
        return metrics.prometheus(req, res, next);
      } else {
        next();
      }
    },
  ];
  if (security.mockTokenRouter) {
    // enableMockJwt (tests and local work only): POST /oauth2/token, served by Express.
    const mock = express();
    mock.disable('x-powered-by');
    mock.use(security.mockTokenRouter);
    stages.push((req, res, next) =>
      req.method === 'POST' && req.path === '/oauth2/token' ? mock(req, res, next) : next(),
    );
  }
  stages.push(openapiMiddleware(config.spec), security.middleware, (req, res, next) => {
    const handler = handlers.get(matchedOperation(res)?.operation.endpoint ?? '');
    // In the spec but not handled by the service.
    if (!handler) return next(new StatusError('ERR10007', [req.path]));
    return handler(req, res, next);
  });

  const app = pipeline(
    stages,
    (req, _res, next) => next(new StatusError('ERR10007', [req.path])),
    errorHandler(logger),
  );
  return { app, metrics };
}

/** Handlers by endpoint; a route that is not an operation of the spec stops the service at start. */
function registerRoutes(
  config: ServiceConfig,
  routes: ServiceAppOptions['routes'],
): Map<string, RequestHandler> {
  const known = new Set(config.spec.operations().map((o) => o.endpoint));
  const handlers = new Map<string, RequestHandler>();
  const add = (method: string) => (path: string, handler: RequestHandler) => {
    const endpoint = `${path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}@${method}`;
    if (!known.has(endpoint)) {
      throw new ConfigError(
        config.loader.locate('openapi').file ?? 'openapi.yaml',
        undefined,
        `the service handles ${method.toUpperCase()} ${path}, which is not an operation of the spec`,
      );
    }
    handlers.set(endpoint, handler);
  };
  routes({
    get: add('get'),
    post: add('post'),
    put: add('put'),
    delete: add('delete'),
    patch: add('patch'),
  });
  return handlers;
}

/**
 * Unknown kids go to the key distribution server of client.yml `oauth.key`, when one is set: a
 * JWKS when security.yml `jwt.keyResolver` is `JsonWebKeySet` (or, without it, client.yml
 * `oauth.key.jwk` is true), else light-oauth2's PEM by kid.
 */
function keySource(config: ServiceConfig): KeySource | undefined {
  const { key } = config.client.oauth;
  const { enableVerifyJwt, bootstrapFromKeyService, jwt } = config.security;
  if (!enableVerifyJwt) return undefined;
  if (!key.server_url) {
    if (!bootstrapFromKeyService) return undefined;
    throw new ConfigError(
      config.loader.locate('client').file ?? 'client.yml',
      'oauth.key.server_url',
      'is required when security.yml bootstrapFromKeyService is true (keys come only from the key server)',
    );
  }
  return createKeyClient({
    key,
    secret: clientSecrets(config.client, config.secret).keyClientSecret,
    jwks: jwt.keyResolver ? jwt.keyResolver === 'JsonWebKeySet' : key.jwk,
    httpsAgent: createHttpsAgent(config.client.tls),
    timeoutMs: config.client.request.timeout,
  });
}
