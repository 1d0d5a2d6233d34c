import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { StatusError } from '@chain/errors';
import { reasonOf } from './error-renderer.js';

/** Asked on every probe, so it must be cheap when all is well. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<unknown>;
}

export interface ReadinessState {
  ready: boolean;
  body: string;
}

const TIMED_OUT = Symbol('timed out');

/** A failed check's reason in the answer holds no secret; the error is logged once a change. */
export function createReadiness(
  serviceId: string,
  checks: readonly ReadinessCheck[],
  logger: Logger,
  timeoutMs = 2000,
  /** More of the answer (the configuration's generation and hash), asked on every probe. */
  details: () => object = () => ({}),
): () => Promise<ReadinessState> {
  const up = (): ReadinessState => ({
    ready: true,
    body: JSON.stringify({ status: 'UP', serviceId, ...details() }),
  });
  if (checks.length === 0) return () => Promise.resolve(up());
  const run = async ({ name, check }: ReadinessCheck) => {
    const settled = new AbortController();
    try {
      const result = await Promise.race([
        check(),
        sleep(timeoutMs, TIMED_OUT, { signal: settled.signal }),
      ]);
      return result === TIMED_OUT ? { name, reason: `no answer within ${timeoutMs} ms` } : { name };
    } catch (error) {
      const reason =
        error instanceof StatusError ? `${error.code} ${error.body.message}` : 'failed';
      return { name, reason, error };
    } finally {
      settled.abort();
    }
  };
  let wasReady: boolean | undefined;
  return async () => {
    const results = await Promise.all(checks.map(run));
    const ready = results.every((r) => r.reason === undefined);
    if (ready !== wasReady) {
      if (ready) logger.info('ready');
      for (const { name, reason, error } of results) {
        // One line, no stack: a catalogue error's causes are ours and the network's.
        const cause = error instanceof StatusError ? reasonOf(error.cause) : undefined;
        if (reason) logger.warn({ check: name, cause }, `not ready: ${name} ${reason}`);
      }
      wasReady = ready;
    }
    if (ready) return up();
    const body = {
      status: 'DOWN',
      serviceId,
      ...details(),
      checks: results.map(({ name, reason }) =>
        reason === undefined ? { name, status: 'UP' } : { name, status: 'DOWN', reason },
      ),
    };
    return { ready, body: JSON.stringify(body) };
  };
}
