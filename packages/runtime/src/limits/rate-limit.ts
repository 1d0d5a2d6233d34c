import { StatusError } from '@chain/errors';
import type { Metrics } from '@chain/metrics';
import { BoundedMap } from '@chain/security';
import type { Exchange, Stage } from '../exchange.js';
import type { LimitConfig, Quota } from './limit-config.js';

/** The quota that binds: the one with the fewest requests left, and when its window ends. */
export interface Verdict {
  ok: boolean;
  limit: number;
  remaining: number;
  resetMs: number;
}

/** Counts a request of `key` if it is within every quota; one that cannot count lets it pass. */
export type Counter = (key: string, quotas: readonly Quota[]) => Verdict | Promise<Verdict>;

/** `counts` after this request's, if it was counted. */
export function verdict(
  ok: boolean,
  quotas: readonly Quota[],
  counts: readonly number[],
  resets: readonly number[],
): Verdict {
  let at = 0;
  for (let i = 1; i < quotas.length; i++) {
    const left = quotas[i].limit - counts[i];
    const least = quotas[at].limit - counts[at];
    if (left < least || (left === least && resets[i] > resets[at])) at = i;
  }
  const { limit } = quotas[at];
  return { ok, limit, remaining: Math.max(0, limit - counts[at]), resetMs: resets[at] };
}

/** Per process: a window per key and quota, from its first request (Redis's key expiry, here). */
export function memoryCounter(
  maxKeys: number,
  now = Date.now,
): (key: string, quotas: readonly Quota[]) => Verdict {
  const windows = new BoundedMap<string, { count: number; endsAt: number }[]>(maxKeys);
  return (key, quotas) => {
    const t = now();
    let found = windows.get(key);
    if (found === undefined) {
      found = quotas.map(() => ({ count: 0, endsAt: 0 }));
      windows.set(key, found);
    }
    for (let i = 0; i < quotas.length; i++) {
      if (found[i].endsAt <= t) found[i] = { count: 0, endsAt: t + quotas[i].windowMs };
    }
    const ok = found.every((w, i) => w.count < quotas[i].limit);
    if (ok) for (const w of found) w.count++;
    const ends = found.map((w) => w.endsAt - t);
    return verdict(
      ok,
      quotas,
      found.map((w) => w.count),
      ends,
    );
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

const longestPrefix = (map: Record<string, unknown>, path: string) => {
  let best: string | undefined;
  for (const prefix in map) {
    if (path.startsWith(prefix) && (best === undefined || prefix.length > best.length)) {
      best = prefix;
    }
  }
  return best;
};

/** light-4j's look-up: the key's own quotas (by path prefix, if so written), else `rateLimit`. */
function quotasOf(config: LimitConfig, id: string, path: string) {
  const own = config.key === 'server' ? config.server : config[config.key][id];
  if (own !== undefined && Array.isArray(own)) return { bucket: id, quotas: own };
  const prefix = own && longestPrefix(own, path);
  if (prefix === undefined || own === undefined) return { bucket: id, quotas: config.rateLimit };
  return { bucket: `${id} ${prefix}`, quotas: own[prefix] as Quota[] };
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
