import path from 'node:path';
import {
  createLogger,
  createServiceApp,
  loadServiceConfig,
  type ExpressExtensions,
  type Framework,
  type ServiceApp,
  type ServiceConfig,
} from '../src/index.js';
import { readBody } from '../src/respond.js';
import { configDir, deferred } from '@chain/testkit';

export { deferred };

/** Both hosts: every suite of the runtime runs on each. */
export const FRAMEWORKS: readonly Framework[] = ['native', 'express'];

export const FIXTURE = path.join(import.meta.dirname, 'fixture');

/** The fixture service's config (test/fixture) overridden by `files`, on the given host. */
export function fixtureConfig(
  framework: Framework,
  files: Record<string, string> = {},
): ServiceConfig {
  const config = loadServiceConfig({ bundledDir: FIXTURE, overrideDir: configDir(files) });
  return { ...config, server: { ...config.server, framework } };
}

/** A real pino logger whose JSON lines the test reads. */
export function captureLogger(level = 'debug') {
  const raw: string[] = [];
  const logger = createLogger('runtime-test', level, { write: (line: string) => raw.push(line) });
  const lines = () => raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines, text: () => raw.join('') };
}

export type CapturedLog = ReturnType<typeof captureLogger>;

export interface FixtureService {
  app: ServiceApp;
  log: CapturedLog;
  /** `GET /v1/slow` has arrived … */
  slowArrived: ReturnType<typeof deferred<void>>;
  /** … and answers once this is resolved. */
  releaseSlow: ReturnType<typeof deferred<void>>;
}

/**
 * The fixture service: handlers for the spec's operations except `/v1/unhandled`.
 * - `GET /v1/items/{id}`: the typed id, the verified caller and the correlation id
 * - `DELETE /v1/items/{id}`: answers 204 itself
 * - `POST /v1/items`: echoes its body (at most 64 bytes)
 * - `GET /v1/open`: `["open"]`; `GET /v1/fail`: throws an Error with internals in its message
 * - `GET /v1/slow`: answers when the test says so
 */
export function fixtureService(
  config: ServiceConfig,
  express?: ExpressExtensions,
  log: CapturedLog = captureLogger(),
): FixtureService {
  const slowArrived = deferred<void>();
  const releaseSlow = deferred<void>();
  const app = createServiceApp({
    config,
    logger: log.logger,
    express,
    routes: (routes) => {
      routes.get('/v1/items/{id}', ({ context }) => ({
        id: context.params.id,
        caller: context.caller?.clientId ?? null,
        correlationId: context.trace.correlationId,
      }));
      routes.delete('/v1/items/{id}', ({ res }) => {
        res.writeHead(204).end();
      });
      routes.post('/v1/items', async ({ req }) => {
        const body = await readBody(req, 64);
        return { received: body.toString('utf8') };
      });
      routes.get('/v1/open', () => ['open']);
      routes.get('/v1/fail', () => {
        throw new Error('secret detail at /srv/app.js:1');
      });
      routes.get('/v1/slow', async () => {
        slowArrived.resolve();
        await releaseSlow.promise;
        return ['slow'];
      });
    },
  });
  return { app, log, slowArrived, releaseSlow };
}

/** Sets `object[key]` for the running test only (Jest's replaceProperty). */
export function replaceProperty<T extends object, K extends keyof T>(
  object: T,
  key: K,
  value: T[K],
): void {
  const before = Object.getOwnPropertyDescriptor(object, key);
  Object.defineProperty(object, key, { value, configurable: true, writable: true });
  onTestFinished(() => {
    if (before) Object.defineProperty(object, key, before);
    else delete object[key];
  });
}
