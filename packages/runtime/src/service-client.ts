import type https from 'node:https';
import type { Logger } from 'pino';
import { ConfigError } from '@chain/errors';
import { highResolutionNow } from '@chain/metrics';
import {
  Downstream,
  DownstreamCaller,
  Http2Transport,
  HttpsTransport,
  UndiciTransport,
  TokenManager,
  type Transport,
  type ClientEvents,
  type TokenSource,
} from '@chain/oauth-client';
import { StatusError } from '@chain/errors';
import type { Exchange } from './exchange';
import type { ReadinessCheck } from './readiness';
import type { ServiceConfig } from './service-config';
import type { Trace } from './correlation';
import type { SpanRecord } from './telemetry/otlp-json';
import type { SpanExporter } from './telemetry/span-exporter';

/** A downstream a service calls. */
export interface DownstreamTarget {
  /** Its name in error descriptions and logs, e.g. `api-b` (never its URL). */
  name: string;
  /** Its base URL, e.g. `https://api-b:7442`; a call's path is appended. */
  url: string;
  /**
   * Its light-4j serviceId, which picks its auth server with client.yml
   * `oauth.multipleAuthServers`; without it, `pathPrefixServices` by each call's path.
   */
  serviceId?: string;
  /**
   * Send the service's own token (light-4j's chain: the caller's `Authorization` unchanged, the
   * own token as `X-Scope-Token`). Default: security.yml `enableVerifyJwt`.
   */
  credentials?: boolean;
}

/** A downstream as a handler calls it: one call for one request. */
export interface ServiceDownstream {
  readonly name: string;
  /**
   * A JSON GET of `path` for the request `x`: its correlation and traceability ids, its W3C trace
   * context (a child span), its pass-through claims and, with credentials, its `Authorization`
   * and the own token go on. Resolves with the 2xx answer; rejects with a catalogue StatusError.
   */
  getJson(x: Exchange, path?: string): Promise<{ status: number; body: unknown }>;
}

/** How a service calls out: its downstreams and its tokens. */
export interface ServiceClient {
  /** A downstream, built once at start (its circuit breaker lives as long as the service). */
  downstream(target: DownstreamTarget): ServiceDownstream;
  /** The service's tokens (own and users'); undefined when client.yml names no token server. */
  readonly tokens: TokenManager | undefined;
  /**
   * What `GET /ready` asks of the client side: for each own token the downstreams made so far
   * call with, that it is at hand or the token server gives it now (without it every call would
   * be ERR10009). The probe shares the renewal of the calls: one request to the token server.
   */
  readinessChecks(): ReadinessCheck[];
}

export interface ServiceClientOptions {
  config: ServiceConfig;
  logger: Logger;
  /** The one keep-alive agent of client.yml's TLS settings (made when first needed). */
  httpsAgent: () => https.Agent;
  events?: ClientEvents;
  /** Client spans, when telemetry.yml exports them. */
  exporter?: SpanExporter;
  now?: () => number;
}

const fileOf = (config: ServiceConfig, name: string) =>
  config.loader.locate(name).file ?? `${config.loader.bundledDir}/${name}.yml`;

/**
 * The service's client side from client.yml: one TokenManager (own tokens by auth server, users'
 * tokens), and per downstream a `Downstream` (transport, time-outs, the retry of a reset
 * connection, the circuit breaker) behind a `DownstreamCaller` (credentials, the retry with a
 * renewed token). This file is the glue to the request: the headers that go on and the client
 * span; what a call means lives in `@chain/oauth-client`.
 */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const { config, logger } = options;
  const now = options.now ?? highResolutionNow;
  const { request, oauth } = config.client;
  /** The own tokens the downstreams call with (one per auth server and client). */
  const ownTokens = new Set<TokenSource>();
  let tokens: TokenManager | undefined;
  const tokenManager = (): TokenManager => {
    if (!tokens) {
      tokens = new TokenManager({
        client: config.client,
        secret: config.secret,
        httpsAgent: options.httpsAgent(),
        events: options.events,
        onBackgroundError: (err) =>
          logger.warn({ err }, 'background token renewal failed; the current token is still used'),
      });
    }
    return tokens;
  };

  /**
   * How the bytes of every downstream call go: client.yml `request.enableHttp2`, HTTP/2 to the
   * downstreams that offer it (one session per origin, shared by the service's downstreams) and
   * HTTP/1.1 keep-alive to the others; else HTTP/1.1 keep-alive only. HTTP/1.1 goes over undici,
   * or node:https with `request.http1Client: node`.
   */
  let transport: Transport | undefined;
  const transportOf = (): Transport => {
    if (!transport) {
      const httpsAgent = options.httpsAgent();
      const http1 =
        request.http1Client === 'node'
          ? new HttpsTransport({ httpsAgent })
          : new UndiciTransport({ tls: httpsAgent.options });
      transport = request.enableHttp2
        ? new Http2Transport({ tls: httpsAgent.options, fallback: http1 })
        : http1;
    }
    return transport;
  };

  const downstream = (target: DownstreamTarget): ServiceDownstream => {
    const withCredentials = target.credentials ?? config.security.enableVerifyJwt;
    const base = new Downstream({
      name: target.name,
      url: target.url,
      timeoutMs: request.timeout,
      connectTimeoutMs: request.connectTimeout,
      transport: transportOf(),
      breaker: { errorThreshold: request.errorThreshold, resetTimeoutMs: request.resetTimeout },
      events: options.events,
    });
    const callerOf = credentialsFor(target, withCredentials, base);
    const { exporter } = options;
    const server = new URL(target.url);
    /** The client span of one call, when it ends. */
    const clientSpan = (
      span: { trace: Trace; spanId: string; startMs: number; path: string | undefined },
      status: number | undefined,
      code: string | undefined,
    ): SpanRecord => ({
      traceId: span.trace.traceId,
      spanId: span.spanId,
      parentSpanId: span.trace.spanId,
      tracestate: span.trace.tracestate,
      name: 'GET',
      kind: 'client',
      startMs: span.startMs,
      endMs: now(),
      attributes: {
        'http.request.method': 'GET',
        'server.address': server.hostname,
        'server.port': Number(server.port || (server.protocol === 'https:' ? 443 : 80)),
        'url.full': base.urlOf(span.path).href,
        'peer.service': target.name,
        ...(status !== undefined ? { 'http.response.status_code': status } : {}),
        ...(code ? { 'error.type': code } : {}),
      },
      error: code !== undefined,
      sampled: true,
      remoteParent: false,
    });

    return {
      name: target.name,
      async getJson(x, path) {
        const { trace, caller } = x.context;
        // One object, filled by assignment (object spreads cost several times more a call).
        const headers: Record<string, string> = {};
        // security.yml passThroughClaims: the verified claims go downstream too.
        const passThrough = caller?.passThrough;
        if (passThrough) for (const name in passThrough) headers[name] = passThrough[name];
        const spanId = trace.addChild(headers);
        headers['X-Correlation-Id'] = trace.correlationId;
        if (trace.traceabilityId) headers['X-Traceability-Id'] = trace.traceabilityId;
        const sampled = exporter !== undefined && trace.sampled;
        // Only with spans exported and sampled: nothing is made for them otherwise.
        const span = sampled ? { trace, spanId, startMs: now(), path } : undefined;
        try {
          const answer = await callerOf(path).getJson({
            path,
            headers,
            trace,
            callerAuthorization: withCredentials ? x.req.headers.authorization : undefined,
          });
          if (span) exporter!.record(clientSpan(span, answer.status, undefined));
          return answer;
        } catch (err) {
          if (span) {
            const code = err instanceof StatusError ? err.code : 'error';
            exporter!.record(clientSpan(span, undefined, code));
          }
          throw err;
        }
      },
    };
  };

  /**
   * The caller of a downstream for a path: no credentials; one token source (one auth server);
   * or, with multipleAuthServers, the source of the serviceId (the target's, else the path's by
   * pathPrefixServices). Checked at start as far as it can be: a missing key stops the service
   * naming it.
   */
  function credentialsFor(
    target: DownstreamTarget,
    withCredentials: boolean,
    base: Downstream,
  ): (path: string | undefined) => DownstreamCaller {
    const make = (source: TokenSource | undefined) => {
      if (source) ownTokens.add(source);
      return new DownstreamCaller({
        downstream: base,
        tokens: source,
        tokenTimeoutMs: request.timeout,
        events: options.events,
      });
    };
    if (!withCredentials) {
      const plain = make(undefined);
      return () => plain;
    }
    const why = 'is required when security.yml enableVerifyJwt is true';
    if (!oauth.token.server_url && !oauth.multipleAuthServers) {
      throw new ConfigError(fileOf(config, 'client'), 'oauth.token.server_url', why);
    }
    if (!oauth.token.client_credentials) {
      throw new ConfigError(fileOf(config, 'client'), 'oauth.token.client_credentials', why);
    }
    if (!oauth.multipleAuthServers) {
      if (
        !config.secret.clientCredentialsClientSecret &&
        !oauth.token.client_credentials.client_secret
      ) {
        throw new ConfigError(fileOf(config, 'secret'), 'clientCredentialsClientSecret', why);
      }
      const single = make(tokenManager().forService(undefined));
      return () => single;
    }
    const manager = tokenManager();
    const basePath = new URL(target.url).pathname.replace(/\/+$/, '');
    const fixed = target.serviceId ?? (basePath ? manager.serviceIdFor(basePath) : undefined);
    if (fixed !== undefined) {
      let source: TokenSource;
      try {
        source = manager.forService(fixed);
      } catch {
        throw new ConfigError(
          fileOf(config, 'client'),
          'oauth.token.client_credentials.serviceIdAuthServers',
          `has no entry for serviceId ${fixed} (downstream ${target.name})`,
        );
      }
      const one = make(source);
      return () => one;
    }
    const byService = new Map<string, DownstreamCaller>();
    return (path) => {
      const serviceId = manager.serviceIdFor(`${basePath}${path ?? ''}`);
      const key = serviceId ?? '';
      let caller = byService.get(key);
      if (!caller) {
        let source: TokenSource;
        try {
          source = manager.forService(serviceId);
        } catch (err) {
          throw new StatusError('ERR10009', [], { cause: err });
        }
        caller = make(source);
        byService.set(key, caller);
      }
      return caller;
    };
  }

  return {
    downstream,
    readinessChecks() {
      const sources = [...ownTokens];
      return sources.map((source) => ({
        name: sources.length === 1 ? 'token' : `token ${source.clientId}`,
        check: () => source.within(request.timeout),
      }));
    },
    get tokens() {
      return oauth.token.server_url || oauth.multipleAuthServers ? tokenManager() : undefined;
    },
  };
}
