import type https from 'node:https';
import type { Logger } from 'pino';
import { ConfigError } from '@chain/config';
import {
  Downstream,
  TokenManager,
  createHttpsAgent,
  credentialHeaders,
  credentialSummary,
} from '@chain/oauth-client';
import {
  createServiceApp,
  type ExpressExtensions,
  type ServiceApp,
  type ServiceConfig,
} from '@chain/runtime';
import { StatusError } from '@chain/security';
import { loadDownstreamConfig, type ChainLetter } from './chain-config';

export interface ChainAppOptions {
  letter: ChainLetter;
  /** The service's Express code, used with server.yml `framework: express`. */
  express?: ExpressExtensions;
}

/** The two messages a chain service contributes, e.g. `API A: Message 1`. */
export function ownMessages(letter: ChainLetter): [string, string] {
  return [`API ${letter}: Message 1`, `API ${letter}: Message 2`];
}

function isStringArray(body: unknown): body is string[] {
  return Array.isArray(body) && body.every((item) => typeof item === 'string');
}

/**
 * With security on, a chain service needs its own client-credentials token for the downstream
 * call: client.yml must name the token server and the grant, secret.yml the secret. Checked at
 * start, so a missing key stops the service with the file and key named.
 */
function tokenManagerFor(
  config: ServiceConfig,
  logger: Logger,
  httpsAgent: https.Agent,
): TokenManager {
  const fileOf = (name: string) =>
    config.loader.locate(name).file ?? `${config.loader.bundledDir}/${name}.yml`;
  const why = 'is required when security.yml enableVerifyJwt is true';
  const { token } = config.client.oauth;
  if (!token.server_url) throw new ConfigError(fileOf('client'), 'oauth.token.server_url', why);
  if (!token.client_credentials) {
    throw new ConfigError(fileOf('client'), 'oauth.token.client_credentials', why);
  }
  if (!config.secret.clientCredentialsClientSecret) {
    throw new ConfigError(fileOf('secret'), 'clientCredentialsClientSecret', why);
  }
  return new TokenManager({
    client: config.client,
    secret: config.secret,
    httpsAgent,
    onBackgroundError: (err) =>
      logger.warn({ err }, 'background token renewal failed; the current token is still used'),
  });
}

/**
 * A chain service: `GET /v1/data` answers the downstream's messages followed by its own two.
 * The downstream client (TLS from client.yml, keep-alive, time-out) is built once here. With
 * security on, the caller's `Authorization` goes on unchanged with the service's own token as
 * `X-Scope-Token` (or in `Authorization` when the caller sent none); a token that cannot be had
 * within the call's time-out is ERR10009.
 */
export function createChainApp(
  config: ServiceConfig,
  logger: Logger,
  { letter, express }: ChainAppOptions,
): ServiceApp {
  const target = loadDownstreamConfig(config.loader, letter);
  const own = ownMessages(letter);
  const timeoutMs = config.client.request.timeout;
  // One keep-alive agent (one read of the trust store) for the downstream and the token server.
  const httpsAgent = target ? createHttpsAgent(config.client.tls) : undefined;
  const downstream =
    target && httpsAgent
      ? new Downstream({ name: target.name, url: target.host + target.path, timeoutMs, httpsAgent })
      : undefined;
  const tokens =
    downstream && httpsAgent && config.security.enableVerifyJwt
      ? tokenManagerFor(config, logger, httpsAgent)
      : undefined;

  const credentials = async (
    callerAuthorization: string | undefined,
  ): Promise<Record<string, string>> => {
    if (!tokens) return {};
    const ownToken = await tokens.clientCredentialsWithin(timeoutMs);
    return credentialHeaders(callerAuthorization, ownToken);
  };

  return createServiceApp({
    config,
    logger,
    express,
    // Ready only with its own token at hand, or one the token server gives now: without it
    // every call would be ERR10009. The probe shares the renewal of the calls (one request).
    readiness: tokens
      ? [{ name: 'token', check: () => tokens.clientCredentialsWithin(timeoutMs) }]
      : [],
    routes: (routes) => {
      routes.get('/v1/data', async ({ req, context: { trace, caller } }) => {
        if (logger.isLevelEnabled('debug')) {
          // What reached this service, for tracing a call through the chain: token
          // fingerprints and client ids only, never a token.
          logger.debug(
            {
              correlationId: trace.correlationId,
              traceabilityId: trace.traceabilityId,
              ...credentialSummary(req.headers),
            },
            'chain request',
          );
        }
        if (!downstream) return own;
        const headers: Record<string, string> = {
          // security.yml passThroughClaims: the verified claims go downstream too.
          ...caller?.passThrough,
          ...(await credentials(req.headers.authorization)),
          'X-Correlation-Id': trace.correlationId,
        };
        if (trace.traceabilityId) headers['X-Traceability-Id'] = trace.traceabilityId;
        const { body } = await downstream.getJson(headers);
        if (!isStringArray(body)) {
          throw new StatusError('ERR20004', [
            downstream.options.name,
            'a body that is not a JSON array of strings',
          ]);
        }
        return [...body, ...own];
      });
    },
  });
}
