import type http from 'node:http';
import type express from 'express';
import type { Logger } from 'pino';
import { ConfigError } from '@chain/config';
import { clientSecrets, createHttpsAgent, createKeyClient } from '@chain/oauth-client';
import { createRequestGuard, type KeySource } from '@chain/security';
import { createMetrics, type Metrics } from '@chain/metrics';
import { createErrorRenderer } from './error-renderer';
import type { Handler, Stage } from './exchange';
import { expressApplication, type ExpressExtensions } from './hosts/express';
import { nativeListener } from './hosts/native';
import type { Framework } from './server-config';
import type { ServiceConfig } from './service-config';
import { dispatchStage } from './stages/dispatch';
import { metricsStage } from './stages/metrics';
import { mockTokenStage } from './stages/mock-token';
import { notFoundStage } from './stages/not-found';
import { probesStage } from './stages/probes';
import { createReadiness, type ReadinessCheck } from './readiness';
import { routingStage } from './stages/routing';
import { passThroughStripStage, securityStage } from './stages/security';
import { validationStage } from './stages/validation';

/** Where a service registers its handlers, by the spec's path templates (`/v2/pet/{petId}`). */
export interface Routes {
  get(path: string, handler: Handler): void;
  post(path: string, handler: Handler): void;
  put(path: string, handler: Handler): void;
  delete(path: string, handler: Handler): void;
  patch(path: string, handler: Handler): void;
}

export interface ServiceAppOptions {
  config: ServiceConfig;
  logger: Logger;
  /** The service's own handlers; they run after the spec, security and validation passed. */
  routes: (routes: Routes) => void;
  /** The service's Express code, used when the host is Express (server.yml `framework`). */
  express?: ExpressExtensions;
  /**
   * What the service needs before it can serve, asked on `GET /ready` (a chain service: its own
   * token). None: ready once it listens.
   */
  readiness?: readonly ReadinessCheck[];
}

export interface ServiceApp {
  /** The host the stages run on: server.yml `framework`. */
  readonly framework: Framework;
  /** The Node request listener of that host, for `http(s).createServer` or supertest. */
  readonly listener: http.RequestListener;
  /** The Express application, when the host is Express. */
  readonly express?: express.Application;
  readonly metrics: Metrics;
}

/**
 * A service's request pipeline, in light-4j's handler order: the probes (`/health`, `/ready`,
 * `/metrics`) -> metrics -> the mock token route (`enableMockJwt`) -> OpenAPI routing (404, 405,
 * OPTIONS) -> security (401, 403) -> path-parameter validation (400) -> the service's handler ->
 * the one error renderer. The correlation id is read before the first stage. The same stages
 * run on the native host or in an Express application, as server.yml `framework` says. Never
 * listens: tests drive the listener with supertest, `startService` listens.
 */
export function createServiceApp(options: ServiceAppOptions): ServiceApp {
  const { config } = options;
  const built = buildStages(options);
  if (config.server.framework === 'express') {
    const app = expressApplication(built.stages, options.express);
    return { framework: 'express', listener: app, express: app, metrics: built.metrics };
  }
  const { outer, spec, end, renderError } = built.stages;
  return {
    framework: 'native',
    listener: nativeListener([...outer, ...spec, end], renderError),
    metrics: built.metrics,
  };
}

/**
 * The service as an Express application, whatever server.yml `framework` says: for a service
 * that embeds the chain's pipeline in an Express application of its own
 * (`outer.use('/chain', createExpressApp(options))`).
 */
export function createExpressApp(options: ServiceAppOptions): express.Application {
  return expressApplication(buildStages(options).stages, options.express);
}

function buildStages({ config, logger, routes, readiness = [] }: ServiceAppOptions) {
  const { serviceId } = config.server;
  const metrics = createMetrics(config.metrics, {
    serviceId,
    logger,
    prometheus: config.prometheus,
  });
  const { key } = config.client.oauth;
  const guard = createRequestGuard({
    config: config.security,
    logger,
    keySource: keySource(config),
    keyPolicy: { timeoutMs: config.client.request.timeout },
    claims: { audience: key.audience, issuer: key.issuer },
    events: logger,
  });
  const { passThroughClaims } = config.security;
  const outer: Stage[] = [
    probesStage(serviceId, metrics, createReadiness(serviceId, readiness, logger)),
  ];
  if (metrics.enabled) outer.push(metricsStage(metrics));
  if (guard.mockIssuer) outer.push(mockTokenStage(guard.mockIssuer));
  const spec: Stage[] = [routingStage(config.spec)];
  if (guard.check) spec.push(securityStage(guard.check, passThroughClaims));
  else if (Object.keys(passThroughClaims).length)
    spec.push(passThroughStripStage(passThroughClaims));
  spec.push(validationStage, dispatchStage(registerRoutes(config, routes)));
  return {
    metrics,
    stages: { outer, spec, end: notFoundStage, renderError: createErrorRenderer(logger) },
  };
}

/** Handlers by endpoint; a route that is not an operation of the spec stops the service at start. */
function registerRoutes(
  config: ServiceConfig,
  routes: ServiceAppOptions['routes'],
): Map<string, Handler> {
  const known = new Set(config.spec.operations().map((o) => o.endpoint));
  const handlers = new Map<string, Handler>();
  const add = (method: string) => (path: string, handler: Handler) => {
    const endpoint = `${path}@${method}`;
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
