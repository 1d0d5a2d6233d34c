import { StatusError } from '@chain/errors';
import type { Metrics } from '@chain/metrics';
import { BoundedMap } from '@chain/security';
import type { Exchange, Stage } from '../exchange.js';
import type { LimitConfig, Quota } from './limit-config.js';

/** The quota that binds: the one with the fewest requests left, and when to come back. */
export interface Verdict {
  ok: boolean;
  limit: number;
  remaining: number;
  /** Refused: until one more fits; else until the whole quota is free again. */
  resetMs: number;
}

/** Counts a request of `key` if it is within every quota; one that cannot count lets it pass. */
export type Counter = (key: string, quotas: readonly Quota[]) => Verdict | Promise<Verdict>;

/**
 * GCRA (a bucket of `limit` requests refilled evenly over the window): a quota's `fill` is how
 * far ahead of now its booked requests reach, this one included (one is `windowMs / limit`).
 * Within the quota while the fill is at most the window: a burst of `limit`, then one request
 * every `windowMs / limit`, so admissions stay spread under a sustained overload.
 */
export function verdict(quotas: readonly Quota[], fills: readonly number[]): Verdict {
  let at = 0;
  let least = Infinity;
  for (let i = 0; i < quotas.length; i++) {
    const { limit, windowMs } = quotas[i];
    const over = fills[i] - windowMs;
    // Over: below zero, the longer the wait the lower; else the requests that still fit.
    const left = over > 0 ? -over : Math.floor(-over / (windowMs / limit));
    if (left < least) [least, at] = [left, i];
  }
  const over = fills[at] - quotas[at].windowMs;
  const ok = over <= 0;
  return {
    ok,
    limit: quotas[at].limit,
    remaining: Math.max(0, least),
    resetMs: ok ? fills[at] : over,
  };
}

/** Per process: each quota's theoretical arrival time per key (kept in Redis, there). */
export function memoryCounter(maxKeys: number, now = Date.now) {
  const arrivals = new BoundedMap<string, number[]>(maxKeys);
  return (key: string, quotas: readonly Quota[]) => {
    const t = now();
    const booked = arrivals.get(key) ?? [];
    const next = quotas.map((q, i) => Math.max(booked[i] ?? 0, t) + q.windowMs / q.limit);
    const v = verdict(
      quotas,
      next.map((at) => at - t),
    );
    if (v.ok) arrivals.set(key, next);
    return v;
  };
}

type Key = LimitConfig['key'];

const KEY_OF: Record<Key, (x: Exchange) => string> = {
  server: () => '',
  address: (x) => x.req.socket?.remoteAddress ?? '',
  client: (x) => x.context.caller?.clientId ?? '',
  user: (x) => x.context.caller?.userId ?? '',
};

/** Keys of the address and the server are counted before security: no token work when over. */
export const countsBeforeSecurity = (key: Key): boolean => key === 'server' || key === 'address';

/** light-4j's look-up: the key's own quotas (by path prefix, if so written), else `rateLimit`. */
function quotasOf(config: LimitConfig, id: string, path: string) {
  const own = config.key === 'server' ? config.server : config[config.key][id];
  if (Array.isArray(own)) return { bucket: id, quotas: own };
  let prefix: string | undefined;
  for (const p in own) if (path.startsWith(p) && p.length > (prefix?.length ?? -1)) prefix = p;
  if (prefix === undefined) return { bucket: id, quotas: config.rateLimit };
  return { bucket: `${id} ${prefix}`, quotas: own![prefix] };
}

/**
 * light-4j's LimitHandler: over a quota, 429 ERR10088 (or with `errorCode: 503`, ERR20015) with
 * `Retry-After` and the RateLimit-* headers (seconds, as the IETF draft; light-4j writes a date).
 */
export function rateLimitStage(config: LimitConfig, counter: Counter, metrics: Metrics): Stage {
  const keyOf = KEY_OF[config.key];
  const decide = (x: Exchange, v: Verdict) => {
    const reset = String(Math.max(1, Math.ceil(v.resetMs / 1000)));
    const headers = {
      'RateLimit-Limit': String(v.limit),
      'RateLimit-Remaining': String(v.remaining),
      'RateLimit-Reset': reset,
    };
    if (v.ok) {
      // `limit` 0: Redis did not answer, nothing was counted.
      if (config.headersAlwaysSet && v.limit > 0) {
        for (const [name, value] of Object.entries(headers)) x.res.setHeader(name, value);
      }
      return;
    }
    metrics.refused('rate_limit');
    const [code, args] =
      config.errorCode === 503
        ? (['ERR20015', ['over its rate limit']] as const)
        : (['ERR10088', []] as const);
    throw new StatusError(code, [...args], { headers: { ...headers, 'Retry-After': reset } });
  };
  return (x) => {
    const id = keyOf(x);
    const { bucket, quotas } = quotasOf(config, id, x.path);
    const v = counter(`${config.key}:${bucket}`, quotas);
    if (v instanceof Promise) return v.then((value) => decide(x, value));
    decide(x, v);
  };
}
