import type { Logger } from 'pino';
import { Downstream, createHttpsAgent } from '@chain/oauth-client';
import { createServiceApp, traceOf, type ServiceApp, type ServiceConfig } from '@chain/runtime';
import { StatusError } from '@chain/security';
import { loadDownstreamConfig, type ChainLetter } from './chain-config';

export interface ChainAppOptions {
  letter: ChainLetter;
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
 * The downstream client (TLS from client.yml, keep-alive, time-out) is built once here.
 */
export function createChainApp(
  config: ServiceConfig,
  logger: Logger,
  { letter }: ChainAppOptions,
): ServiceApp {
  const target = loadDownstreamConfig(config.loader, letter);
  const own = ownMessages(letter);
  const downstream = target
    ? new Downstream({
        url: target.host + target.path,
        timeoutMs: config.client.request.timeout,
        httpsAgent: createHttpsAgent(config.client.tls),
      })
    : undefined;

  return createServiceApp({
    config,
    logger,
    routes: (router) => {
      router.get('/v1/data', async (_req, res, next) => {
        try {
          if (!downstream) {
            res.json(own);
            return;
          }
          const trace = traceOf(res);
          const headers: Record<string, string> = { 'X-Correlation-Id': trace.correlationId };
          if (trace.traceabilityId) headers['X-Traceability-Id'] = trace.traceabilityId;
          const { body } = await downstream.getJson(headers);
          if (!isStringArray(body)) {
            throw new StatusError('ERR20004', [
              downstream.options.url,
              'a body that is not a JSON array of strings',
            ]);
          }
          res.json([...body, ...own]);
        } catch (err) {
          next(err);
        }
      });
    },
  });
}
