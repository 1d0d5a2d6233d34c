import type { Logger } from 'pino';
import { matchedOperation } from '@chain/openapi';
import { createServiceApp, type ServiceApp, type ServiceConfig } from '@chain/runtime';
import { StatusError } from '@chain/security';
import { PetStore } from './pet-store';

/** The petstore: `GET /v2/pet/{petId}`; routing, parameter types and scopes come from openapi.yaml. */
export function createApp(
  config: ServiceConfig,
  logger: Logger,
  store = new PetStore(),
): ServiceApp {
  return createServiceApp({
    config,
    logger,
    routes: (router) => {
      router.get('/v2/pet/:petId', (_req, res, next) => {
        const petId = matchedOperation(res)?.params.petId as number;
        const pet = store.get(petId);
        if (!pet) return next(new StatusError('ERR20001', [`Pet ${petId}`]));
        res.json(pet);
      });
    },
  });
}
