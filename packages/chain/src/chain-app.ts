import type { Logger } from 'pino';
import { credentialSummary } from '@chain/oauth-client';
import {
  createServiceApp,
  type ExpressExtensions,
  type ServiceApp,
  type ServiceConfig,
} from '@chain/runtime';
import { StatusError } from '@chain/errors';
import { loadDownstreamConfig, type ChainLetter } from './chain-config.js';

export function createChainApp(letter: ChainLetter, express?: ExpressExtensions) {
  const own = [`API ${letter}: Message 1`, `API ${letter}: Message 2`];
  return (config: ServiceConfig, logger: Logger): ServiceApp => {
    const target = loadDownstreamConfig(config.loader, letter);
    return createServiceApp({
      config,
      logger,
      express,
      routes: (routes, { client }) => {
        // Built once: its client.yml keys are checked now, naming any missing one.
        const downstream = target && client.downstream({ name: target.name, url: target.host });
        routes.get('/v1/data', async (x) => {
          const { req, context } = x;
          if (logger.isLevelEnabled('debug')) {
            // Token fingerprints and client ids only, never a token.
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
          if (!Array.isArray(body) || body.some((item) => typeof item !== 'string')) {
            throw new StatusError('ERR20004', [
              downstream.name,
              'a body that is not a JSON array of strings',
            ]);
          }
          return [...body, ...own];
        });
      },
    });
  };
}
