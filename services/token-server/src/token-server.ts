import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import util from 'node:util';
import { ConfigLoader, type ConfigLoaderOptions } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { createLogger, readTrace, type Logger } from '@chain/runtime';
import { basicCredentials } from './client-auth';
import { CODE_ENDPOINT, codeEndpoint } from './code-endpoint';
import { introspectionAudit } from './introspection';
import { keyEndpoints, loadKeySet, sendJson } from './key-endpoints';
import { tokenPortTlsOptions } from './bound-tokens';
import { createProvider } from './provider';
import {
  loadTokenServerConfig,
  type ClientsConfig,
  type TokenServerConfig,
  type UsersConfig,
} from './token-server-config';
import { TokenStats } from './token-stats';

export interface RunningTokenServer {
  tokenPort: number;
  keyPort: number;
  stats: TokenStats;
  logger: Logger;
  /**
   * Reads token-server.yml and clients.yml again and starts signing with the signing key and
   * serving the certificates they name, without closing a connection (key rotation while the
   * chain runs). A bad file is logged and the running configuration kept. Ports do not change.
   */
  reload(): Promise<boolean>;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024;

/**
 * Starts the token server (port tokenPort: `POST /oauth2/token`) and the key server (port
 * keyPort: `GET /oauth2/key/{kid}`, `GET /oauth2/jwks`), both HTTPS, both with `GET /health`
 * and `GET /stats`. Throws ConfigError for a bad config file.
 */
export async function startTokenServer(options: ConfigLoaderOptions): Promise<RunningTokenServer> {
  const loader = new ConfigLoader(options);
  const { server: config, clients, users } = loadTokenServerConfig(loader);
  const logger = createLogger('token-server');
  routeLibraryNotices(logger);
  for (const { file, key, message } of loader.warnings) {
    logger.warn({ file, key }, `${file}${key ? ` key "${key}"` : ''}: ${message}`);
  }
  const stats = new TokenStats();
  const build = async (
    server: TokenServerConfig,
    registered: ClientsConfig,
    registeredUsers: UsersConfig,
  ) => {
    const { provider, issueCode } = await createProvider(server, registered, registeredUsers);
    provider.use(introspectionAudit(stats, logger));
    provider.on('grant.success', (ctx) => {
      const clientId = ctx.oidc.client?.clientId ?? 'unknown';
      stats.issue(clientId);
      const body = ctx.body as { expires_in?: unknown; refresh_token?: unknown } | undefined;
      // When the token expires (epoch ms): what a client's renewal is measured against. For a
      // refresh token, the latest moment it can still be used.
      const expiresAt =
        typeof body?.expires_in === 'number' ? Date.now() + body.expires_in * 1000 : undefined;
      const refreshExpiresAt =
        typeof body?.refresh_token === 'string'
          ? Date.now() + server.refreshTokenLifetimeSeconds * 1000
          : undefined;
      logger.info({ clientId, expiresAt, refreshExpiresAt }, 'token issued');
    });
    provider.on('grant.error', (_ctx, err) => {
      logger.info({ error: (err as { error?: string }).error ?? err.name }, 'token refused');
    });
    provider.on('server_error', (_ctx, err) => logger.error({ err }, 'token server error'));
    return {
      oidc: provider.callback(),
      clients: registered,
      users: registeredUsers.users,
      issueCode,
      codeLifetimeMs: server.codeLifetimeSeconds * 1000,
      keys: loadKeySet(server.certificates),
      signingKid: server.signing.kid,
    };
  };
  let state = await build(config, clients, users);
  const oidc: (req: http.IncomingMessage, res: http.ServerResponse) => void = (req, res) =>
    state.oidc(req, res);
  const keys = keyEndpoints(() => ({ keys: state.keys, clients: state.clients.clients }));
  const served = () => ({ signingKid: state.signingKid, kids: Object.keys(state.keys.pems) });

  const common = (req: http.IncomingMessage, res: http.ServerResponse, name: string) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/health') {
      sendJson(res, 200, { status: 'UP', serviceId: name });
      return true;
    }
    if (req.method === 'GET' && path === '/stats') {
      sendJson(res, 200, stats.snapshot());
      return true;
    }
    return false;
  };

  const tls = { key: fs.readFileSync(config.keyFile), cert: fs.readFileSync(config.certFile) };
  // mTLS: the token port asks for client certificates (bound-tokens.ts); the key port does not.
  const tokenTls = { ...tls, ...tokenPortTlsOptions(config, (file) => fs.readFileSync(file)) };
  const tokenServer = https.createServer(tokenTls, (req, res) => {
    if (common(req, res, 'oauth2-token')) return;
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && path === '/oauth2/token') {
      tokenRequest(req, res, state.clients, stats, logger, oidc);
      return;
    }
    if (path === CODE_ENDPOINT.path) {
      const { users, issueCode, codeLifetimeMs } = state;
      const endpoint = { clients: state.clients.clients, users, issueCode };
      codeRequest(req, res, endpoint, codeLifetimeMs, stats, logger);
      return;
    }
    if (path.startsWith(`${CODE_ENDPOINT.path}/`)) {
      // oidc-provider's resume route of its (unused) interactive authorization endpoint: none
      // here, answered as any unknown route is.
      sendJson(res, 404, {
        error: 'invalid_request',
        error_description: `unrecognized route or not allowed method (${req.method} on ${path})`,
      });
      return;
    }
    oidc(req, res);
  });
  const keyServer = https.createServer(tls, (req, res) => {
    if (common(req, res, 'oauth2-key')) return;
    const path = (req.url ?? '').split('?')[0];
    if (path.startsWith('/oauth2/key/') || path === '/oauth2/jwks') stats.keyRequest();
    if (!keys(req, res)) sendJson(res, 404, { error: 'not_found' });
  });

  const listen = async (server: https.Server, port: number) => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, config.ip, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return (server.address() as AddressInfo).port;
  };
  const tokenPort = await listen(tokenServer, config.tokenPort);
  const keyPort = await listen(keyServer, config.keyPort);
  // The token line first: @chain/testkit's startProcess takes the first https port logged.
  logger.info(
    {
      protocol: 'https',
      ip: config.ip,
      port: tokenPort,
      endpoint: 'token',
      mtls: config.mtls.enabled,
      dpop: config.dpop.enabled,
    },
    `listening on https port ${tokenPort}`,
  );
  logger.info(
    { protocol: 'https', ip: config.ip, port: keyPort, endpoint: 'key' },
    `key server listening on https port ${keyPort}`,
  );
  logger.info(served(), 'signing and serving keys');

  const reload = async (): Promise<boolean> => {
    try {
      const fresh = loadTokenServerConfig(new ConfigLoader(options));
      if (JSON.stringify(fresh.server.mtls) !== JSON.stringify(config.mtls)) {
        // The token port's TLS settings are those it started with.
        throw new Error('token-server.yml mtls changed: it takes effect at a restart only');
      }
      state = await build(fresh.server, fresh.clients, fresh.users);
      logger.info(served(), 'reloaded: signing and serving keys');
      return true;
    } catch (err) {
      const message = err instanceof ConfigError ? err.message : (err as Error).message;
      logger.error({ err: message }, 'reload failed; the running configuration is kept');
      return false;
    }
  };

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const force = setTimeout(() => {
        tokenServer.closeAllConnections();
        keyServer.closeAllConnections();
      }, config.shutdownTimeoutMs);
      force.unref();
      await Promise.all(
        [tokenServer, keyServer].map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeIdleConnections();
            }),
        ),
      );
      clearTimeout(force);
      logger.info('stopped');
    })();
    return closing;
  };
  return { tokenPort, keyPort, stats, logger, reload, close };
}

/**
 * oidc-provider writes its notices and warnings with console.info / console.warn as text (in
 * colour on a terminal): in this process they become JSON lines of the service's log.
 */
function routeLibraryNotices(logger: Logger): void {
  const plain = (args: unknown[]) =>
    util
      .format(...args)
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\[[0-9;]*m/g, '')
      .replace(/^oidc-provider (NOTICE|WARNING): /, '');
  // eslint-disable-next-line no-console -- replaced, not called
  console.info = (...args: unknown[]) => logger.info({ source: 'oidc-provider' }, plain(args));
  console.warn = (...args: unknown[]) => logger.warn({ source: 'oidc-provider' }, plain(args));
}

/**
 * `GET /oauth2/code` (code-endpoint.ts): counted by client, logged with its outcome (client,
 * user, reason; never a code or a password).
 */
function codeRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  state: Parameters<typeof codeEndpoint>[2],
  codeLifetimeMs: number,
  stats: TokenStats,
  logger: Logger,
) {
  const { traceId } = readTrace(req.headers);
  codeEndpoint(req, res, state).then(
    (outcome) => {
      stats.code(outcome.clientId ?? 'unknown', outcome.issued);
      if (outcome.issued) {
        // expiresAt: the latest moment the code can be exchanged (epoch ms).
        const { clientId, userId } = outcome;
        const expiresAt = Date.now() + codeLifetimeMs;
        logger.info({ clientId, userId, expiresAt, traceId }, 'code issued');
      } else {
        logger.info(
          { clientId: outcome.clientId, reason: outcome.reason, traceId },
          'code refused',
        );
      }
    },
    (err: unknown) => {
      logger.error({ err, traceId }, 'code endpoint error');
      if (!res.headersSent) sendJson(res, 500, { error: 'server_error' });
      else res.destroy();
    },
  );
}

/**
 * Counts the request by client, applies light-oauth2's default scope (a client-credentials
 * request without `scope` gets the client's registered scopes), then hands the request to
 * oidc-provider with the body already read.
 */
function tokenRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  { clients }: ClientsConfig,
  stats: TokenStats,
  logger: Logger,
  oidc: (req: http.IncomingMessage, res: http.ServerResponse) => void,
) {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY) {
      sendJson(res, 413, { error: 'invalid_request', error_description: 'body too large' });
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const clientId =
      basicCredentials(req.headers.authorization)?.clientId ?? form.get('client_id') ?? 'unknown';
    stats.request(clientId);
    const { traceId } = readTrace(req.headers);
    logger.info({ clientId, grantType: form.get('grant_type'), traceId }, 'token request');
    const registered = Object.prototype.hasOwnProperty.call(clients, clientId)
      ? clients[clientId].scope
      : [];
    if (
      form.get('grant_type') === 'client_credentials' &&
      !form.get('scope') &&
      registered.length > 0
    ) {
      form.set('scope', registered.join(' '));
    }
    // oidc-provider reads an already-read body from `req.body`.
    (req as http.IncomingMessage & { body?: string }).body = form.toString();
    oidc(req, res);
  });
}
