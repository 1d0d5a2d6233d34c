import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { StatusError } from '@chain/errors';

/**
 * One condition a service needs before it can serve, for `GET /ready`: `check` resolves when it
 * holds and rejects when it does not. Asked on every probe, so it must be cheap when all is well.
 */
export interface ReadinessCheck {
  /** The name in the answer, e.g. `token`. */
  readonly name: string;
  check(): Promise<unknown>;
}

export interface ReadinessState {
  ready: boolean;
  /** The answer's body: `{"status":"UP"|"DOWN","serviceId":...,"checks":[...]}`. */
  body: string;
}

const TIMED_OUT = Symbol('timed out');

/**
 * The readiness of a service: ready when every check holds within `timeoutMs` (the probe's own
 * time-out is longer). The answer names each failed check with a reason that holds no secret (a
 * catalogue error's code and message, a time-out, or `failed`); the error goes to the log, once
 * per change of state.
 */
export function createReadiness(
  serviceId: string,
  checks: readonly ReadinessCheck[],
  logger: Logger,
  timeoutMs = 2000,
): () => Promise<ReadinessState> {
  const up: ReadinessState = { ready: true, body: JSON.stringify({ status: 'UP', serviceId }) };
  if (checks.length === 0) return () => Promise.resolve(up);
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
    const results: { name: string; reason?: string; error?: unknown }[] = await Promise.all(
      checks.map(run),
    );
    const ready = results.every((r) => r.reason === undefined);
    if (ready !== wasReady) {
      if (ready) logger.info('ready');
      for (const { name, reason, error } of results) {
        if (reason) logger.warn({ check: name, err: error }, `not ready: ${name} ${reason}`);
      }
      wasReady = ready;
    }
    if (ready) return up;
    const body = {
      status: 'DOWN',
      serviceId,
      checks: results.map(({ name, reason }) =>
        reason === undefined ? { name, status: 'UP' } : { name, status: 'DOWN', reason },
      ),
    };
    return { ready, body: JSON.stringify(body) };
  };
}
