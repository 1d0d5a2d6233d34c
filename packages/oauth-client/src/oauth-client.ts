import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfigSource, type WarningLogger } from '@chain/config';
import { BoundedMap } from '@chain/security';
import { Downstream, HttpClient } from '@chain/http';
import { clientConfigSchema, secretConfigSchema, type ClientConfig } from './client-config.js';
import type { ClientEvents } from './client-events.js';
import { DownstreamCaller } from './downstream-caller.js';
import { TokenManager } from './token-manager.js';

export interface OAuthClientOptions {
  /** client.yml: its path, or its keys as YAML parses them (checked by the same schema). */
  config: string | Record<string, unknown>;
  /** secret.yml's keys (`clientCredentialsClientSecret`, ...); default: secret.yml beside `config`. */
  secrets?: Record<string, unknown>;
  /** Config warnings and failed background renewals. */
  logger?: WarningLogger;
  events?: ClientEvents;
}

export interface CallOptions {
  /** The caller's `Authorization`, passed on: the own token then goes in `X-Scope-Token`. */
  authorization?: string;
  /** `X-Correlation-Id`; default: a new UUID. */
  correlationId?: string;
  traceabilityId?: string;
  /** More headers: `traceparent`, pass-through claims. */
  headers?: Record<string, string>;
}

export interface OAuthClient {
  readonly config: ClientConfig;
  /** The own client-credentials token: cached, renewed as client.yml says, else ERR10009. */
  token(path?: string): Promise<string>;
  /** A GET with the own token: the 2xx answer, else a rejected `StatusError` of the catalogue. */
  call(url: string | URL, options?: CallOptions): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

/** client.yml's token manager and downstream calls in a few lines (README). */
export function createOAuthClient(options: OAuthClientOptions): OAuthClient {
  const { config, logger, events } = options;
  const client = loadConfigSource(config, 'client', clientConfigSchema, logger);
  const beside =
    typeof config === 'string' ? path.join(path.dirname(client.file), 'secret.yml') : undefined;
  const secrets = options.secrets ?? (beside && fs.existsSync(beside) ? beside : {});
  const secret = loadConfigSource(secrets, 'secret', secretConfigSchema, logger);
  const { request, oauth } = client.value;
  const http = new HttpClient(client.value);
  const manager = new TokenManager({
    client: client.value,
    secret: secret.value,
    clientFile: client.file,
    secretFile: secret.file,
    http,
    events,
    onBackgroundError: (err) => logger?.warn({ err }, 'background token renewal failed'),
  });
  // With multipleAuthServers the auth server is the path's (pathPrefixServices).
  const tokens = (path: string) =>
    manager.forService(oauth.multipleAuthServers ? manager.serviceIdFor(path) : undefined);
  // One breaker per origin; a bound on what a caller may make of URLs.
  const downstreams = new BoundedMap<string, Downstream>(256);
  const downstream = ({ origin, host }: URL) => {
    let made = downstreams.get(origin);
    if (made) return made;
    const { timeout: timeoutMs, errorThreshold, resetTimeout: resetTimeoutMs } = request;
    const breaker = { errorThreshold, resetTimeoutMs };
    made = new Downstream({ name: host, url: origin, timeoutMs, transport: http, breaker, events });
    downstreams.set(origin, made);
    return made;
  };
  return {
    config: client.value,
    token: async (path = '/') => tokens(path).get(),
    async call(url, o = {}) {
      const target = new URL(url);
      const headers: Record<string, string> = { ...o.headers };
      headers['X-Correlation-Id'] = o.correlationId ?? randomUUID();
      if (o.traceabilityId) headers['X-Traceability-Id'] = o.traceabilityId;
      const { pathname, search } = target;
      const caller = new DownstreamCaller({
        downstream: downstream(target),
        tokens: tokens(pathname),
        events,
      });
      return caller.getJson({
        path: pathname + search,
        headers,
        callerAuthorization: o.authorization,
      });
    },
    close: () => http.destroy(),
  };
}
