import type http from 'node:http';
import type express from 'express';
import type { Logger } from 'pino';
import { ConfigError } from '@chain/errors';
import {
  clientSecrets,
  createIntrospectionClient,
  createKeyClient,
  HttpClient,
  introspectionEndpoint,
  type ClientEvents,
} from '@chain/oauth-client';
import { createRequestGuard, type IntrospectionSource, type KeySource } from '@chain/security';
import { createMetrics, type Metrics } from '@chain/metrics';
import { clientFiles, createServiceClient, type ServiceClient } from './service-client';
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
import { tracingStage } from './stages/tracing';
import { validationStage } from './stages/validation';
import { SpanExporter } from './telemetry/span-exporter';
import { workerMetricsLink } from './workers';

/** Where a service registers its handlers, by the spec's path templates (`/v2/pet/{petId}`). */
export interface Routes {
  get(path: string, handler: Handler): void;
  post(path: string, handler: Handler): void;
  put(path: string, handler: Handler): void;
  delete(path: string, handler: Handler): void;
  patch(path: string, handler: Handler): void;
}

/** What a service's handlers are built with, beside the routes. */
export interface ServiceTools {
  /** How the service calls out: its downstreams and tokens (client.yml). */
  client: ServiceClient;
  metrics: Metrics;
}

export interface ServiceAppOptions {
  config: ServiceConfig;
  logger: Logger;
  /**
   * The service's own handlers; they run after the spec, security and validation passed. Built
   * once, at start, with the service's tools (its downstreams are made here).
   */
  routes: (routes: Routes, tools: ServiceTools) => void;
  /** The service's Express code, used when the host is Express (server.yml `framework`). */
  express?: ExpressExtensions;
  /**
   * What the service needs before it can serve, asked on `GET /ready`, beside the own tokens its
   * downstreams call with (those the client side adds). None: ready once it listens.
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
  /** The span exporter, when telemetry.yml `enabled` (started and stopped with the service). */
  readonly exporter?: SpanExporter;
  readonly client: ServiceClient;
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
  const { metrics, exporter, client } = built;
  if (config.server.framework === 'express') {
    const app = expressApplication(built.stages, options.express);
    return { framework: 'express', listener: app, express: app, metrics, exporter, client };
  }
  const { outer, spec, end, renderError } = built.stages;
  return {
    framework: 'native',
    listener: nativeListener([...outer, ...spec, end], renderError),
    metrics,
    exporter,
    client,
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
    worker: workerMetricsLink(),
  });
  // One HTTP client (one read of the trust store) for every call the service makes.
  let httpClient: HttpClient | undefined;
  const http = () => (httpClient ??= new HttpClient(config.client));
  const events = clientEvents(metrics, logger);
  const exporter = config.telemetry.enabled
    ? new SpanExporter({
        config: config.telemetry,
        serviceName: config.telemetry.serviceName ?? serviceId,
        logger,
        http,
      })
    : undefined;
  const client = createServiceClient({ config, logger, http, events, exporter });
  const { key } = config.client.oauth;
  const guard = createRequestGuard({
    config: config.security,
    logger,
    keySource: keySource(config, http, events),
    introspection: introspectionSource(config, http),
    keyPolicy: { timeoutMs: config.client.request.timeout },
    claims: { audience: key.audience, issuer: key.issuer },
    events: logger,
  });
  const { passThroughClaims } = config.security;
  // The handlers first: the downstreams they make decide what readiness checks.
  const handlers = registerRoutes(config, (r) => routes(r, { client, metrics }));
  const checks = [...client.readinessChecks(), ...readiness];
  const outer: Stage[] = [
    probesStage(serviceId, metrics, createReadiness(serviceId, checks, logger)),
  ];
  if (metrics.enabled) outer.push(metricsStage(metrics));
  if (exporter) outer.push(tracingStage(exporter, metrics.now));
  if (guard.mockIssuer) outer.push(mockTokenStage(guard.mockIssuer));
  const spec: Stage[] = [routingStage(config.spec)];
  if (guard.check) spec.push(securityStage(guard.check, passThroughClaims, swtHeaders(config)));
  else if (Object.keys(passThroughClaims).length)
    spec.push(passThroughStripStage(passThroughClaims));
  spec.push(validationStage, dispatchStage(handlers));
  return {
    metrics,
    exporter,
    client,
    stages: { outer, spec, end: notFoundStage, renderError: createErrorRenderer(logger) },
  };
}

/**
 * What the client side reports goes to the metrics (when counted) and, for a circuit that opens
 * or closes, to the log.
 */
function clientEvents(metrics: Metrics, logger: Logger): ClientEvents {
  const counted = metrics.client;
  return {
    ...counted,
    circuitChanged: (event) => {
      counted?.circuitChanged(event);
      const { downstream, state } = event;
      if (state === 'open') {
        logger.warn(
          { downstream, circuit: state },
          `circuit open: calls to ${downstream} fail at once for now`,
        );
      } else if (state === 'closed') {
        logger.info({ downstream, circuit: state }, `circuit closed: ${downstream} answers again`);
      }
    },
  };
}

/** Handlers by endpoint; a route that is not an operation of the spec stops the service at start. */
function registerRoutes(
  config: ServiceConfig,
  routes: (routes: Routes) => void,
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
function keySource(
  config: ServiceConfig,
  http: () => HttpClient,
  events: ClientEvents,
): KeySource | undefined {
  const { key } = config.client.oauth;
  const { enableVerifyJwt, bootstrapFromKeyService, jwt } = config.security;
  if (!enableVerifyJwt) return undefined;
  const serverUrl = key.server_url;
  if (!serverUrl) {
    if (!bootstrapFromKeyService) return undefined;
    throw new ConfigError(
      config.loader.locate('client').file ?? 'client.yml',
      'oauth.key.server_url',
      'is required when security.yml bootstrapFromKeyService is true (keys come only from the key server)',
    );
  }
  return createKeyClient({
    key: { ...key, server_url: serverUrl },
    secret: clientSecrets(config.client, config.secret).keyClientSecret,
    jwks: jwt.keyResolver ? jwt.keyResolver === 'JsonWebKeySet' : key.jwk,
    http: http(),
    timeoutMs: config.client.request.timeout,
    events,
  });
}

/**
 * security.yml `enableVerifySwt`: opaque tokens go to client.yml's introspection server
 * (`introspectionEndpoint`: a missing key stops the service naming it). Beside JWT verification
 * without an introspection server, only JWTs verify: said once at start, with the other config
 * warnings.
 */
function introspectionSource(
  config: ServiceConfig,
  http: () => HttpClient,
): IntrospectionSource | undefined {
  const { enableVerifyJwt, enableVerifySwt } = config.security;
  if (!enableVerifySwt) return undefined;
  const endpoint = introspectionEndpoint(clientFiles(config), enableVerifyJwt);
  if (!endpoint) {
    const { file } = config.loader.locate(['openapi-security', 'security']);
    config.loader.warnings.push({
      file: file ?? 'security.yml',
      key: 'enableVerifySwt',
      message:
        'no introspection server (client.yml oauth.introspection): only JWTs are verified, any other token is refused (ERR10000)',
    });
    return undefined;
  }
  return createIntrospectionClient({
    endpoint,
    http: http(),
    timeoutMs: config.client.request.timeout,
  });
}

/** The request headers that may bring the introspection client (security.yml), when it is used. */
function swtHeaders(config: ServiceConfig) {
  const { enableVerifySwt, swtClientIdHeader, swtClientSecretHeader } = config.security;
  return enableVerifySwt
    ? { clientId: swtClientIdHeader, clientSecret: swtClientSecretHeader }
    : undefined;
}
