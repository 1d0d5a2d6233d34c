import type { KeyObject } from 'node:crypto';
import type { Clock } from './clock';
import { toRsaPublicKey, type KeyMaterial } from './public-key';
import { StatusError } from './status-error';
import { invalidToken } from './token-error';

/**
 * Fetches the key of a kid the certificate map does not hold (the key distribution server).
 * Resolves undefined when the server does not know the kid; rejects when it cannot be asked.
 */
export type KeyResolver = (kid: string) => Promise<KeyMaterial | undefined>;

export interface KeyResolverPolicy {
  /** Longest wait for one look-up; past it the request gets ERR20005. */
  timeoutMs: number;
  /** How long a kid the server does not know is answered "unknown" without asking again. */
  notFoundTtlMs: number;
  /** How long a kid whose look-up failed is answered ERR20005 without asking again. */
  failureTtlMs: number;
  /** Global rate limit of look-ups (token bucket): at most `burst` at once... */
  burst: number;
  /** ...then one more per `refillMs`. */
  refillMs: number;
  /** Bound of the fetched-key and the remembered-miss maps each. */
  maxEntries: number;
}

export const DEFAULT_KEY_POLICY: KeyResolverPolicy = {
  timeoutMs: 3000,
  notFoundTtlMs: 60_000,
  failureTtlMs: 5_000,
  burst: 5,
  refillMs: 10_000,
  maxEntries: 1000,
};

interface Miss {
  until: number;
  failure?: unknown;
}

/**
 * The verification keys by kid: the configured certificates, then keys fetched from the key
 * server. Unknown kids are looked up once at a time per kid (single flight), misses and failures
 * are remembered for a while, and all look-ups share a global rate limit, so a flood of made-up
 * kids costs the key server a handful of requests.
 */
export class KeyStore {
  private readonly fetched = new Map<string, KeyObject>();
  private readonly misses = new Map<string, Miss>();
  private readonly pending = new Map<string, Promise<KeyObject>>();
  private readonly policy: KeyResolverPolicy;
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly configured: ReadonlyMap<string, KeyObject>,
    private readonly options: {
      resolver?: KeyResolver;
      policy?: Partial<KeyResolverPolicy>;
      now: Clock;
    },
  ) {
    this.policy = { ...DEFAULT_KEY_POLICY, ...options.policy };
    this.tokens = this.policy.burst;
    this.refilledAt = options.now();
  }

  /** The key of a kid already known, without any look-up. */
  known(kid: string): KeyObject | undefined {
    return this.configured.get(kid) ?? this.fetched.get(kid);
  }

  /**
   * The key of a kid: known, or looked up. Throws a TokenError (unknown kid) or ERR20005 (the
   * key server could not be asked, or did not answer in time).
   */
  async resolve(kid: string): Promise<KeyObject> {
    const key = this.known(kid);
    if (key) return key;
    const { resolver, now } = this.options;
    if (!resolver) throw invalidToken('unknown kid');
    const at = now();
    const miss = this.misses.get(kid);
    if (miss && miss.until > at) {
      if (miss.failure !== undefined) throw keyUnavailable(kid, miss.failure);
      throw invalidToken('unknown kid');
    }
    let flight = this.pending.get(kid);
    if (!flight) {
      if (!this.take(at)) throw invalidToken('unknown kid; key look-ups are rate-limited');
      flight = this.fetch(resolver, kid);
      this.pending.set(kid, flight);
      const done = () => this.pending.delete(kid);
      flight.then(done, done);
    }
    return flight;
  }

  private async fetch(resolver: KeyResolver, kid: string): Promise<KeyObject> {
    const { timeoutMs, notFoundTtlMs, failureTtlMs } = this.policy;
    let material: KeyMaterial | undefined;
    let key: KeyObject;
    try {
      material = await withTimeout(resolver(kid), timeoutMs);
      if (material !== undefined) key = toRsaPublicKey(material);
    } catch (err) {
      this.remember(kid, { until: this.options.now() + failureTtlMs, failure: err });
      throw keyUnavailable(kid, err);
    }
    if (material === undefined) {
      this.remember(kid, { until: this.options.now() + notFoundTtlMs });
      throw invalidToken('unknown kid');
    }
    this.misses.delete(kid);
    bounded(this.fetched, this.policy.maxEntries).set(kid, key!);
    return key!;
  }

  private remember(kid: string, miss: Miss): void {
    this.misses.delete(kid);
    bounded(this.misses, this.policy.maxEntries).set(kid, miss);
  }

  private take(at: number): boolean {
    const { burst, refillMs } = this.policy;
    this.tokens = Math.min(burst, this.tokens + Math.max(0, at - this.refilledAt) / refillMs);
    this.refilledAt = at;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** Drops the oldest entry of a map that is full, so one more can be set. */
function bounded<K, V>(map: Map<K, V>, max: number): Map<K, V> {
  while (map.size > 0 && map.size >= max) map.delete(map.keys().next().value as K);
  return map;
}

function keyUnavailable(kid: string, cause: unknown): StatusError {
  return new StatusError('ERR20005', [kid], { cause });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
