import type { Logger } from 'pino';
import { StatusError } from '@chain/errors';

/**
 * One condition a service needs before it can serve, for `GET /ready` (the Kubernetes readiness
 * probe). `check` resolves when the condition holds and rejects when it does not; it is asked
 * again on every probe, so it must be cheap when all is well (a token at hand, say).
 */
export interface ReadinessCheck {
  /** The name in the answer, e.g. `token`. */
  readonly name: string;
  check(): Promise<unknown>;
}

/** How long one check may take before it counts as failed (the probe's own time-out is longer). */
export const READINESS_TIMEOUT_MS = 2000;

export interface ReadinessState {
  ready: boolean;
  /** The answer's body: `{"status":"UP"|"DOWN","serviceId":...,"checks":[...]}`. */
  body: string;
}

/**
 * The readiness of a service: ready when every check holds. A service without checks is ready
 * once it listens (its certificates and keys are loaded before it does). The answer names each
 * failed check with a reason that holds no secret: a catalogue error's code and message, a
 * time-out, or `failed`; the error itself goes to the log, once per change of state.
 */
export function createReadiness(
  serviceId: string,
  checks: readonly ReadinessCheck[],
  logger: Logger,
  timeoutMs = READINESS_TIMEOUT_MS,
): () => Promise<ReadinessState> {
  const up: ReadinessState = { ready: true, body: JSON.stringify({ status: 'UP', serviceId }) };
  if (checks.length === 0) return () => Promise.resolve(up);
  let wasReady: boolean | undefined;
  return async () => {
    const results = await Promise.all(checks.map((c) => run(c, timeoutMs)));
    const failed = results.filter((r) => r.reason !== undefined);
    const ready = failed.length === 0;
    if (ready !== wasReady) {
      if (ready) logger.info('ready');
      else {
        for (const f of failed)
          logger.warn({ check: f.name, err: f.error }, `not ready: ${f.name} ${f.reason}`);
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

async function run(
  { name, check }: ReadinessCheck,
  timeoutMs: number,
): Promise<{ name: string; reason?: string; error?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadinessTimeout(timeoutMs)), timeoutMs);
  });
  try {
    await Promise.race([check(), timeout]);
    return { name };
  } catch (error) {
    const reason =
      error instanceof ReadinessTimeout
        ? `no answer within ${timeoutMs} ms`
        : error instanceof StatusError
          ? `${error.code} ${error.body.message}`
          : 'failed';
    return { name, reason, error };
  } finally {
    clearTimeout(timer);
  }
}

class ReadinessTimeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}
