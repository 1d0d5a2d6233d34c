import { once } from 'node:events';
import fs from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import util from 'node:util';
import getRawBody from 'raw-body';
import { ConfigLoader, logConfigWarnings, type ConfigLoaderOptions } from '@chain/config';
import { createLogger, readTrace, type Logger } from '@chain/runtime';
import { tokenPortTls } from './bound-tokens.js';
import { basicCredentials } from './client-auth.js';
import { CODE_ENDPOINT, codeEndpoint } from './code-endpoint.js';
import { introspectionAudit } from './introspection.js';
import { keyEndpoints, loadKeySet, sendJson } from './key-endpoints.js';
import { unknownRoute } from './metadata.js';
import { createProvider } from './provider.js';
import { loadTokenServerConfig } from './token-server-config.js';
import { tokenStats, type TokenStats } from './token-stats.js';

const MAX_BODY = 64 * 1024;

type Route = (req: http.IncomingMessage, res: http.ServerResponse, path: string) => void;

/** The token port and the key port, both HTTPS; `reload`: the README's key rotation. */
export async function startTokenServer(options: ConfigLoaderOptions) {
  const loader = new ConfigLoader(options);
  const files = loadTokenServerConfig(loader);
  const config = files.server;
  const logger = createLogger('token-server');
  routeLibraryNotices(logger);
  logConfigWarnings(logger, loader.warnings);
  const stats = tokenStats();
  let state = buildState(files, stats, logger);
  const served = () => ({ signingKid: state.signingKid, kids: Object.keys(state.keys.pems) });

  const tls = { key: fs.readFileSync(config.keyFile), cert: fs.readFileSync(config.certFile) };
  const codeRequest: Route = (req, res) => {
    const { traceId } = readTrace(req.headers);
    const { codeLifetimeMs } = state;
    codeEndpoint(req, res, state).then(
      (outcome) => {
        const { clientId } = outcome;
        stats.count('codeRequests', clientId ?? 'unknown');
        if ('userId' in outcome) {
          stats.count('codesIssued', clientId ?? 'unknown');
          const expiresAt = Date.now() + codeLifetimeMs;
          logger.info({ clientId, userId: outcome.userId, expiresAt, traceId }, 'code issued');
        } else {
          logger.info({ clientId, reason: outcome.reason, traceId }, 'code refused');
        }
      },
      (err: unknown) => {
        logger.error({ err, traceId }, 'code endpoint error');
        if (!res.headersSent) sendJson(res, 500, { error: 'server_error' });
        else res.destroy();
      },
    );
  };
  /** light-oauth2's default scope: a client credentials request without one gets the client's. */
  const tokenRequest: Route = (req: http.IncomingMessage & { body?: string }, res) => {
    const { clients, oidc } = state;
    getRawBody(req, { limit: MAX_BODY }).then(
      (body) => {
        const form = new URLSearchParams(body.toString('utf8'));
        const basicId = basicCredentials(req.headers.authorization)?.clientId;
        const clientId = basicId ?? form.get('client_id') ?? 'unknown';
        stats.count('tokenRequests', clientId);
        const { traceId } = readTrace(req.headers);
        logger.info({ clientId, grantType: form.get('grant_type'), traceId }, 'token request');
        const registered = Object.hasOwn(clients, clientId) ? clients[clientId].scope : [];
        const clientCredentials = form.get('grant_type') === 'client_credentials';
        if (clientCredentials && !form.get('scope') && registered.length > 0) {
          form.set('scope', registered.join(' '));
        }
        req.body = form.toString();
        void oidc(req, res);
      },
      () => {
        sendJson(res, 413, { error: 'invalid_request', error_description: 'body too large' });
        req.destroy();
      },
    );
  };
  const tokenRoutes: Route = (req, res, path) => {
    if (req.method === 'POST' && path === '/oauth2/token') {
      tokenRequest(req, res, path);
    } else if (path === CODE_ENDPOINT.path) {
      codeRequest(req, res, path);
    } else if (path.startsWith(`${CODE_ENDPOINT.path}/`)) {
      // oidc-provider's resume route of its interactive authorization endpoint, unused here.
      sendJson(res, 404, unknownRoute(req.method ?? '', path));
    } else {
      void state.oidc(req, res);
    }
  };
  const keyRoutes: Route = (req, res, path) => {
    if (path.startsWith('/oauth2/key/') || path === '/oauth2/jwks') stats.keyRequest();
    if (!keyEndpoints(req, res, path, state)) sendJson(res, 404, { error: 'not_found' });
  };
  const servers = [
    https.createServer(
      { ...tls, ...tokenPortTls(config) },
      listener('oauth2-token', stats, tokenRoutes),
    ),
    https.createServer(tls, listener('oauth2-key', stats, keyRoutes)),
  ];
  const listen = async (server: https.Server, port: number) => {
    await once(server.listen(port, config.ip), 'listening');
    return (server.address() as AddressInfo).port;
  };
  const tokenPort = await listen(servers[0], config.tokenPort);
  const keyPort = await listen(servers[1], config.keyPort);
  // The token line first: @chain/testkit's startProcess takes the first https port logged.
  const { mtls, dpop } = config;
  const at = { protocol: 'https', ip: config.ip };
  logger.info(
    { ...at, port: tokenPort, endpoint: 'token', mtls: mtls.enabled, dpop: dpop.enabled },
    `listening on https port ${tokenPort}`,
  );
  logger.info(
    { ...at, port: keyPort, endpoint: 'key' },
    `key server listening on https port ${keyPort}`,
  );
  logger.info(served(), 'signing and serving keys');

  const reload = (): void => {
    try {
      const fresh = loadTokenServerConfig(new ConfigLoader(options));
      if (JSON.stringify(fresh.server.mtls) !== JSON.stringify(mtls)) {
        throw new Error('token-server.yml mtls changed: it takes effect at a restart only');
      }
      state = buildState(fresh, stats, logger);
      logger.info(served(), 'reloaded: signing and serving keys');
    } catch (err) {
      const message = (err as Error).message;
      logger.error({ err: message }, 'reload failed; the running configuration is kept');
    }
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      const force = setTimeout(() => {
        for (const server of servers) server.closeAllConnections();
      }, config.shutdownTimeoutMs).unref();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      clearTimeout(force);
      logger.info('stopped');
    })());
  return { logger, reload, close };
}

function buildState(
  { server, clients, users }: ReturnType<typeof loadTokenServerConfig>,
  stats: TokenStats,
  logger: Logger,
) {
  const keys = loadKeySet(server.certificates);
  const { provider, issueCode } = createProvider(server, clients, users, keys.pems);
  provider.use(introspectionAudit(stats, logger));
  provider.on('grant.success', (ctx) => {
    const clientId = ctx.oidc.client?.clientId ?? 'unknown';
    stats.count('tokensIssued', clientId);
    const body = ctx.body as { expires_in?: unknown; refresh_token?: unknown } | undefined;
    const expiresAt =
      typeof body?.expires_in === 'number' ? Date.now() + body.expires_in * 1000 : undefined;
    const refreshExpiresAt =
      typeof body?.refresh_token === 'string'
        ? Date.now() + server.refreshTokenLifetimeSeconds * 1000
        : undefined;
    logger.info({ clientId, expiresAt, refreshExpiresAt }, 'token issued');
  });
  provider.on('grant.error', (_ctx, err) => {
    logger.info({ error: err.error ?? err.name }, 'token refused');
  });
  provider.on('server_error', (_ctx, err) => logger.error({ err }, 'token server error'));
  return {
    oidc: provider.callback(),
    clients,
    users,
    issueCode,
    codeLifetimeMs: server.codeLifetimeSeconds * 1000,
    keys,
    signingKid: server.signing.kid,
  };
}

function listener(serviceId: string, stats: TokenStats, route: Route) {
  return (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || (path !== '/health' && path !== '/stats')) route(req, res, path);
    else sendJson(res, 200, path === '/health' ? { status: 'UP', serviceId } : stats.snapshot());
  };
}

/** oidc-provider writes its notices with console.info / console.warn (in colour on a terminal). */
function routeLibraryNotices(logger: Logger): void {
  const plain = (args: unknown[]) =>
    util
      .stripVTControlCharacters(util.format(...args))
      .replace(/^oidc-provider (NOTICE|WARNING): /, '');
  // eslint-disable-next-line no-console -- replaced, not called
  console.info = (...args: unknown[]) => logger.info({ source: 'oidc-provider' }, plain(args));
  console.warn = (...args: unknown[]) => logger.warn({ source: 'oidc-provider' }, plain(args));
}
