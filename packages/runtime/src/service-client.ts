import type { Logger } from 'pino';
import { ConfigError, StatusError } from '@chain/errors';
import { highResolutionNow } from '@chain/metrics';
import { Downstream, type HttpClient } from '@chain/http';
import {
  DownstreamCaller,
  forwardedAuthorization,
  grantSettings,
  TokenManager,
  type ClientEvents,
  type ClientFiles,
  type TokenSource,
} from '@chain/oauth-client';
import { parseCredentials } from '@chain/security';
import type { Trace } from './correlation.js';
import type { Exchange } from './exchange.js';
import type { ReadinessCheck } from './readiness.js';
import type { ServiceConfig } from './service-config.js';
import type { SpanRecord } from './telemetry/otlp-json.js';
import type { SpanExporter } from './telemetry/span-exporter.js';

export interface DownstreamTarget {
  /** Its name in error descriptions and logs, e.g. `api-b` (never its URL). */
  name: string;
  url: string;
  /** Send the own token as `X-Scope-Token`. Default: whether the service verifies tokens. */
  credentials?: boolean;
}

export interface ServiceDownstream {
  readonly name: string;
  /** Resolves with the 2xx answer; rejects with a catalogue StatusError. */
  getJson(x: Exchange, path?: string): Promise<{ status: number; body: unknown }>;
}

export interface ServiceClient {
  /** A downstream, built once at start (its circuit breaker lives as long as the service). */
  downstream(target: DownstreamTarget): ServiceDownstream;
  /** `GET /ready`: each own token the downstreams call with is at hand or obtained now. */
  readinessChecks(): ReadinessCheck[];
}

/** The glue between a request and `@chain/oauth-client`: the headers and the client span. */
export function createServiceClient(options: {
  config: ServiceConfig;
  logger: Logger;
  http: () => HttpClient;
  events?: ClientEvents;
  exporter?: SpanExporter;
}): ServiceClient {
  const { config, logger, events } = options;
  const files = clientFiles(config);
  let manager: TokenManager | undefined;
  const tokens = () =>
    (manager ??= new TokenManager({
      ...files,
      http: options.http(),
      events,
      onBackgroundError: (err) =>
        logger.warn({ err }, 'background token renewal failed; the current token is still used'),
    }));
  const ownTokens = new Set<TokenSource>();

  return {
    downstream(target) {
      const { request } = config.client;
      const base = new Downstream({
        name: target.name,
        url: target.url,
        timeoutMs: request.timeout,
        transport: options.http(),
        breaker: { errorThreshold: request.errorThreshold, resetTimeoutMs: request.resetTimeout },
        events,
      });
      const { enableVerifyJwt, enableVerifySwt } = config.security;
      if (!(target.credentials ?? (enableVerifyJwt || enableVerifySwt))) {
        const plain = new DownstreamCaller({ downstream: base, events });
        return serviceDownstream(base, () => plain, false, options.exporter);
      }
      const verifying = enableVerifyJwt ? 'enableVerifyJwt' : 'enableVerifySwt';
      const callerOf = ownTokenCallers(target, files, tokens, verifying, (source) => {
        ownTokens.add(source);
        return new DownstreamCaller({ downstream: base, tokens: source, events });
      });
      if (!config.client.oauth.token.token_exchange?.audience) {
        return serviceDownstream(base, callerOf, true, options.exporter);
      }
      // RFC 8693: the caller's token, exchanged for one for the downstream, is the only one sent.
      const manager = tokens();
      const exchanging = (path: string | undefined, x: Exchange) => {
        const subject = parseCredentials(x.req.headers.authorization)?.token;
        if (subject === undefined || !x.context.caller) return callerOf(path);
        return new DownstreamCaller({
          downstream: base,
          tokens: manager.forSubject(subject),
          events,
        });
      };
      return serviceDownstream(base, exchanging, false, options.exporter);
    },
    readinessChecks() {
      return [...ownTokens].map((source) => ({
        name: ownTokens.size === 1 ? 'token' : `token ${source.clientId}`,
        check: () => source.get(),
      }));
    },
  };
}

export function clientFiles(config: ServiceConfig): ClientFiles {
  const fileOf = (name: string) =>
    config.loader.locate(name).file ?? `${config.loader.bundledDir}/${name}.yml`;
  return {
    client: config.client,
    secret: config.secret,
    clientFile: fileOf('client'),
    secretFile: fileOf('secret'),
  };
}

/** Checked at start where it can be; a path whose serviceId has no auth server is ERR10009. */
function ownTokenCallers(
  target: DownstreamTarget,
  files: ClientFiles,
  tokens: () => TokenManager,
  verifying: 'enableVerifyJwt' | 'enableVerifySwt',
  make: (source: TokenSource) => DownstreamCaller,
): (path: string | undefined) => DownstreamCaller {
  if (!files.client.oauth.multipleAuthServers) {
    const why =
      target.credentials === undefined
        ? `is required when security.yml ${verifying} is true`
        : `is required to call ${target.name} with the service's own token`;
    grantSettings(files, 'client_credentials', why);
    const single = make(tokens().forService(undefined));
    return () => single;
  }
  const manager = tokens();
  const basePath = new URL(target.url).pathname.replace(/\/+$/, '');
  const fixed = basePath ? manager.serviceIdFor(basePath) : undefined;
  if (fixed !== undefined) {
    let one: DownstreamCaller;
    try {
      one = make(manager.forService(fixed));
    } catch (err) {
      const { file, key, reason } = err as ConfigError;
      throw new ConfigError(file, key, `${reason} (downstream ${target.name})`);
    }
    return () => one;
  }
  const byService = new Map<string, DownstreamCaller>();
  return (path) => {
    const serviceId = manager.serviceIdFor(`${basePath}${path ?? ''}`);
    let caller = byService.get(serviceId ?? '');
    if (!caller) {
      try {
        caller = make(manager.forService(serviceId));
      } catch (err) {
        throw new StatusError('ERR10009', [], { cause: err });
      }
      byService.set(serviceId ?? '', caller);
    }
    return caller;
  };
}

function serviceDownstream(
  base: Downstream,
  callerOf: (path: string | undefined, x: Exchange) => DownstreamCaller,
  withCredentials: boolean,
  exporter: SpanExporter | undefined,
): ServiceDownstream {
  return {
    name: base.options.name,
    async getJson(x, path) {
      const { trace, caller } = x.context;
      // One object, filled by assignment (object spreads cost several times more a call).
      const headers: Record<string, string> = {};
      const passThrough = caller?.passThrough;
      if (passThrough) for (const key in passThrough) headers[key] = passThrough[key];
      const spanId = trace.addChild(headers);
      headers['X-Correlation-Id'] = trace.correlationId;
      if (trace.traceabilityId) headers['X-Traceability-Id'] = trace.traceabilityId;
      const span =
        exporter !== undefined && trace.sampled
          ? { trace, spanId, startMs: highResolutionNow(), path }
          : undefined;
      try {
        const answer = await callerOf(path, x).getJson({
          path,
          headers,
          trace,
          // A bound caller token stops here (the hop cannot prove it): the own token goes instead.
          callerAuthorization: withCredentials
            ? forwardedAuthorization(x.req.headers.authorization, caller?.claims)
            : undefined,
        });
        if (span) exporter!.record(clientSpan(base, span, answer.status, undefined));
        return answer;
      } catch (err) {
        if (span) {
          const code = err instanceof StatusError ? err.code : 'error';
          exporter!.record(clientSpan(base, span, undefined, code));
        }
        throw err;
      }
    },
  };
}

/** OpenTelemetry's HTTP client span attributes. */
function clientSpan(
  base: Downstream,
  span: { trace: Trace; spanId: string; startMs: number; path: string | undefined },
  status: number | undefined,
  code: string | undefined,
): SpanRecord {
  const server = base.urlOf();
  return {
    traceId: span.trace.traceId,
    spanId: span.spanId,
    parentSpanId: span.trace.spanId,
    tracestate: span.trace.tracestate,
    name: 'GET',
    kind: 'client',
    startMs: span.startMs,
    endMs: highResolutionNow(),
    attributes: {
      'http.request.method': 'GET',
      'server.address': server.hostname,
      'server.port': Number(server.port || (server.protocol === 'https:' ? 443 : 80)),
      'url.full': base.urlOf(span.path).href,
      'peer.service': base.options.name,
      ...(status !== undefined ? { 'http.response.status_code': status } : {}),
      ...(code ? { 'error.type': code } : {}),
    },
    error: code !== undefined,
    sampled: true,
    remoteParent: false,
  };
}
