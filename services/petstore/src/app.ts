import type { Logger } from 'pino';
import { createServiceApp, type ServiceApp, type ServiceConfig } from '@chain/runtime';
import { StatusError } from '@chain/errors';
import { PETS, type Pet } from './pet-store.js';

/** The petstore: `GET /v2/pet/{petId}`; routing, parameter types and scopes come from openapi.yaml. */
export function createApp(
  config: ServiceConfig,
  logger: Logger,
  store: ReadonlyMap<number, Pet> = PETS,
): ServiceApp {
  return createServiceApp({
    config,
    logger,
    routes: (routes) => {
      routes.get('/v2/pet/{petId}', ({ context }) => {
        const petId = context.params.petId as number;
        const pet = store.get(petId);
        if (!pet) throw new StatusError('ERR20001', [`Pet ${petId}`]);
        return pet;
      });
    },
  });
}
