import type http from 'node:http';
import type express from 'express';
import type { Logger } from 'pino';
import { ConfigError } from '@chain/errors';
import {
  clientSecrets,
  createIntrospectionClient,
  createKeyClient,
  introspectionEndpoint,
  type ClientEvents,
} from '@chain/oauth-client';
import { HttpClient, tlsOptions } from '@chain/http';
import {
  createVerifier,
  resourceIdentifier,
  type IntrospectionSource,
  type KeySource,
} from '@chain/security';
import { createMetrics, type Metrics } from '@chain/metrics';
import { clientFiles, createServiceClient, type ServiceClient } from './service-client.js';
import { createErrorRenderer } from './error-renderer.js';
import type { Handler, Stage } from './exchange.js';
import { expressApplication, type ExpressExtensions } from './hosts/express.js';
import { nativeListener } from './hosts/native.js';
import type { Framework } from './server-config.js';
import type { ServiceConfig } from './service-config.js';
import { createReadiness, type ReadinessCheck } from './readiness.js';
import { configReloadStage } from './config-reload.js';
import { dispatchStage, notFoundStage, routingStage, validationStage } from './stages/routing.js';
import {
  metricsStage,
  mockTokenStage,
  probesStage,
  resourceMetadataStage,
  tracingStage,
} from './stages/outer.js';
import { securityStage } from './stages/security.js';
import { overloadStage } from './limits/overload.js';
import { countsBeforeSecurity, memoryCounter, rateLimitStage } from './limits/rate-limit.js';
import { redisCounter, redisReplayStore } from './limits/redis-store.js';
import { SpanExporter } from './telemetry/span-exporter.js';
import { workerMetricsLink } from './workers.js';

const RELOAD_NEEDS =
  'needs security.yml enableVerifyJwt: true (a reload is asked for with a token holding configReload.yml scope)';
const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;

/** Handlers by the spec's path templates (`/v2/pet/{petId}`). */
export type Routes = Record<(typeof METHODS)[number], (path: string, handler: Handler) => void>;

export interface ServiceTools {
  client: ServiceClient;
  metrics: Metrics;
}

export interface ServiceAppOptions {
  config: ServiceConfig;
  logger: Logger;
  /** Called once, at start; the handlers run after routing, security and validation. */
  routes: (routes: Routes, tools: ServiceTools) => void;
  express?: ExpressExtensions;
  /** Asked on `GET /ready`, beside the own tokens of the downstreams. */
  readiness?: readonly ReadinessCheck[];
}

export interface ServiceApp {
  readonly framework: Framework;
  readonly listener: http.RequestListener;
  readonly metrics: Metrics;
  readonly exporter?: SpanExporter;
  /** Where it listens (`https://host:port`): a DPoP proof's `htu` when `dpop.origins` is empty. */
  setOwnOrigins(origins: readonly string[]): void;
}

/** A service's request pipeline, in light-4j's handler order. Never listens. */
export function createServiceApp(options: ServiceAppOptions): ServiceApp {
  const { metrics, exporter, stages, setOwnOrigins } = buildStages(options);
  const { framework } = options.config.server;
  const listener =
    framework === 'express'
      ? expressApplication(stages, options.express)
      : nativeListener([...stages.outer, ...stages.spec, stages.end], stages.renderError);
  return { framework, listener, metrics, exporter, setOwnOrigins };
}

/** The pipeline as an Express application whatever server.yml `framework` says, to embed. */
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
  const keyClient = (options: KeyOptions) =>
    createKeyClient({ ...options, http: http(), timeoutMs: config.client.request.timeout, events });
  const { key } = config.client.oauth;
  let ownOrigins: readonly string[] = [];
  const { dpop } = config.security;
  const verifier = createVerifier({
    replayStore: dpop.redis
      ? redisReplayStore(dpop.redis, logger, tlsOptions(config.client.tls))
      : undefined,
    ownOrigins: () => ownOrigins,
    config: config.security,
    logger,
    keySource: keySource(config, keyClient),
    keySourceOf: (issuer) => {
      const key = config.security.jwt.issuers[issuer]?.key;
      return key && keyClient({ key, secret: key.client_secret, jwks: key.jwk });
    },
    introspection: introspectionSource(config, http),
    keyPolicy: { timeoutMs: config.client.request.timeout },
    claims: { audience: key.audience, issuer: key.issuer },
  });
  if (config.configReload.enabled && !verifier.verifies) {
    const { file } = config.loader.locate('configReload');
    throw new ConfigError(file ?? 'configReload.yml', 'enabled', RELOAD_NEEDS);
  }
  // The handlers first: the downstreams they make decide what readiness checks.
  const handlers = registerRoutes(config, (r) => routes(r, { client, metrics }));
  const checks = [...client.readinessChecks(), ...readiness];
  const revision = () => config.revision;
  const inUse = () => {
    const r = config.revision;
    return r ? { config: { generation: r.generation, hash: r.hash } } : {};
  };
  const outer: Stage[] = [
    probesStage(
      serviceId,
      metrics,
      createReadiness(serviceId, checks, logger, 2000, inUse),
      revision,
    ),
    configReloadStage(config.configReload, verifier, revision),
  ];
  if (metrics.enabled) outer.push(metricsStage(metrics));
  const { limit } = config;
  const shedding = overloadStage(limit.overload, metrics, logger);
  if (shedding) outer.push(shedding);
  let rateLimit: Stage | undefined;
  if (limit.enabled) {
    const counter = limit.redis
      ? redisCounter(limit.redis, serviceId, logger, tlsOptions(config.client.tls))
      : memoryCounter(limit.maxKeys);
    rateLimit = rateLimitStage(limit, counter, metrics);
    // A key of the token's claims is counted after security (light-4j: after the JWT handler).
    if (countsBeforeSecurity(limit.key)) outer.push(rateLimit);
  }
  if (exporter) outer.push(tracingStage(exporter, metrics.now));
  if (verifier.mockIssuer) outer.push(mockTokenStage(verifier.mockIssuer));
  if (config.security.resourceMetadata.enabled) {
    const resource = resourceIdentifier(config.security, () => ownOrigins);
    outer.push(resourceMetadataStage(resource, (at) => protectedResource(config, at)));
  }
  const spec: Stage[] = [routingStage(config.spec)];
  // Without verification a caller's own pass-through headers still go (no `X-User-Id: admin`).
  if (verifier.verifies || Object.keys(config.security.passThroughClaims).length) {
    spec.push(securityStage(verifier));
  }
  if (rateLimit && !countsBeforeSecurity(limit.key)) spec.push(rateLimit);
  spec.push(validationStage, dispatchStage(handlers));
  return {
    metrics,
    exporter,
    setOwnOrigins: (list: readonly string[]) => (ownOrigins = list),
    stages: { outer, spec, end: notFoundStage, renderError: createErrorRenderer(logger) },
  };
}

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
  routes(Object.fromEntries(METHODS.map((m) => [m, add(m)])) as Routes);
  return handlers;
}

/** RFC 9728 section 2: what a client needs to get a token this service takes. */
function protectedResource(config: ServiceConfig, resource: string) {
  const { security, client, server } = config;
  const issuers = Object.keys(security.jwt.issuers);
  const servers =
    security.resourceMetadata.authorizationServers ??
    (issuers.length ? issuers : (client.oauth.key.issuer ?? []));
  const scopes = [...new Set(config.spec.operations().flatMap((o) => o.scopes))].sort();
  return {
    resource,
    ...(servers.length && { authorization_servers: servers }),
    ...(scopes.length && { scopes_supported: scopes }),
    bearer_methods_supported: ['header'],
    dpop_signing_alg_values_supported: security.dpop.algorithms,
    ...(server.enableTwoWayTls && { tls_client_certificate_bound_access_tokens: true }),
  };
}

type KeyOptions = Pick<Parameters<typeof createKeyClient>[0], 'key' | 'secret' | 'jwks'>;

/** Unknown kids go to client.yml `oauth.key`'s server: a JWKS, or light-oauth2's PEM by kid. */
function keySource(
  config: ServiceConfig,
  keyClient: (options: KeyOptions) => KeySource,
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
  return keyClient({
    key: { ...key, server_url: serverUrl },
    secret: clientSecrets(config.client, config.secret).keyClientSecret,
    jwks: jwt.keyResolver ? jwt.keyResolver === 'JsonWebKeySet' : key.jwk,
  });
}

/** Beside JWT verification, no introspection server means only JWTs verify: a start warning. */
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
