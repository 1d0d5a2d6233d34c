import type { Logger } from 'pino';
import { credentialSummary } from '@chain/oauth-client';
import {
  createServiceApp,
  type ExpressExtensions,
  type ServiceApp,
  type ServiceConfig,
} from '@chain/runtime';
import { StatusError } from '@chain/errors';
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
 * A chain service: `GET /v1/data` answers the downstream's messages followed by its own two.
 * The downstream is the runtime's service client (client.yml: TLS, keep-alive, connect and
 * request time-outs, the retry of a reset connection, the circuit breaker). With security on,
 * the caller's `Authorization` goes on unchanged with the service's own token as
 * `X-Scope-Token` (or in `Authorization` when the caller sent none); a token that cannot be had
 * within the call's time-out is ERR10009, and a downstream that refuses our token gets one more
 * call with a renewed one. Correlation, traceability and W3C trace ids go on.
 */
export function createChainApp(
  config: ServiceConfig,
  logger: Logger,
  { letter, express }: ChainAppOptions,
): ServiceApp {
  const target = loadDownstreamConfig(config.loader, letter);
  const own = ownMessages(letter);

  return createServiceApp({
    config,
    logger,
    express,
    routes: (routes, { client }) => {
      // Built once: the downstream's transport, time-outs, circuit breaker and, with security
      // on, the service's own token (its client.yml keys checked now, naming any missing one).
      const downstream = target && client.downstream({ name: target.name, url: target.host });
      routes.get('/v1/data', async (x) => {
        const { req, context } = x;
        if (logger.isLevelEnabled('debug')) {
          // What reached this service, for tracing a call through the chain: token
          // fingerprints and client ids only, never a token.
          logger.debug(
            {
              correlationId: context.trace.correlationId,
              traceId: context.trace.traceId,
              traceabilityId: context.trace.traceabilityId,
              ...credentialSummary(req.headers),
            },
            'chain request',
          );
        }
        if (!downstream || !target) return own;
        const { body } = await downstream.getJson(x, target.path);
        if (!isStringArray(body)) {
          throw new StatusError('ERR20004', [
            downstream.name,
            'a body that is not a JSON array of strings',
          ]);
        }
        return [...body, ...own];
      });
    },
  });
}
