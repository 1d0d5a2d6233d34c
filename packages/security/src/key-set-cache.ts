import {
  answerWithin,
  FAILURE_TTL_MS,
  keyUnavailable,
  MAX_KIDS,
  REFETCH_COOLDOWN_MS,
  refreshAgeMs,
  sameKey,
  SET_COOLDOWN_MS,
  usable,
  type FetchedKeysOptions,
} from './key-policy.js';
import { BoundedMap } from './bounded-map.js';
import type { KeySource } from './key-source.js';
import type { VerificationKey } from './public-key.js';
import { invalidToken } from './token-error.js';

export class KeySetCache {
  private keys = new Map<string, VerificationKey>();
  private fetchedAt: number | undefined;
  private attemptedAt: number | undefined;
  private failure: { until: number; cause: unknown } | undefined;
  private flight: Promise<void> | undefined;
  private readonly refetchedAt = new BoundedMap<string, number>(MAX_KIDS);

  constructor(
    private readonly source: Extract<KeySource, { kind: 'set' }>,
    private readonly options: FetchedKeysOptions,
  ) {}

  current(kid: string): VerificationKey | undefined {
    if (this.fetchedAt === undefined) return undefined;
    const { policy, now } = this.options;
    const at = now();
    const age = at - this.fetchedAt;
    if (age >= policy.maxAgeMs) return undefined;
    if (age >= refreshAgeMs(policy) && !this.flight && !this.failingAt(at)) {
      this.load().catch(() => undefined);
    }
    return this.keys.get(kid);
  }

  async resolve(kid: string): Promise<VerificationKey> {
    const held = this.current(kid);
    if (held) return held;
    if (this.flight) return this.after(this.flight, kid);
    const { policy, now } = this.options;
    const at = now();
    if (this.failingAt(at)) throw keyUnavailable(kid, this.failure!.cause);
    const fresh = this.fetchedAt !== undefined && at - this.fetchedAt < policy.maxAgeMs;
    if (fresh && this.coolingDown(at)) throw invalidToken('unknown kid; not in the key set');
    return this.after(this.load(), kid);
  }

  async refetch(kid: string, stale: VerificationKey): Promise<VerificationKey | undefined> {
    const held = this.keys.get(kid);
    if (held !== stale) return held;
    const at = this.options.now();
    const last = this.refetchedAt.get(kid);
    if ((last !== undefined && at - last < REFETCH_COOLDOWN_MS) || this.coolingDown(at)) {
      return undefined;
    }
    this.refetchedAt.set(kid, at);
    await this.load().catch(() => undefined);
    const fresh = this.keys.get(kid);
    return fresh && !sameKey(fresh, stale) ? fresh : undefined;
  }

  private coolingDown(at: number): boolean {
    return this.attemptedAt !== undefined && at - this.attemptedAt < SET_COOLDOWN_MS;
  }

  private failingAt(at: number): boolean {
    return this.failure !== undefined && this.failure.until > at;
  }

  private async after(flight: Promise<void>, kid: string): Promise<VerificationKey> {
    await flight.catch((err: unknown) => {
      throw keyUnavailable(kid, err);
    });
    const key = this.keys.get(kid);
    if (!key) throw invalidToken('unknown kid; not in the key set');
    return key;
  }

  /** The fetch in flight, or a new one. */
  load(): Promise<void> {
    this.flight ??= this.fetch().finally(() => (this.flight = undefined));
    return this.flight;
  }

  private async fetch(): Promise<void> {
    const { policy, now, events } = this.options;
    this.attemptedAt = now();
    let set;
    try {
      set = await answerWithin(this.source.fetch(), policy.timeoutMs);
    } catch (err) {
      this.failure = { until: now() + FAILURE_TTL_MS, cause: err };
      events?.warn({ err }, 'key set fetch failed');
      throw err;
    }
    const keys = new Map<string, VerificationKey>();
    for (const [kid, { material, alg }] of set) {
      if (keys.size >= MAX_KIDS) break;
      const key = await usable(kid, material, this.options, alg);
      // The same key again keeps its identity, so tokens it verified stay cached.
      const previous = this.keys.get(kid);
      if (key) keys.set(kid, sameKey(previous, key) ? previous! : key);
    }
    const added = [...keys.keys()].filter((kid) => !this.keys.has(kid));
    const retired = [...this.keys.keys()].filter((kid) => !keys.has(kid));
    this.keys = keys;
    this.fetchedAt = now();
    this.failure = undefined;
    if (added.length || retired.length) {
      events?.info({ added, retired, kids: keys.size }, 'key set fetched from the key server');
    }
  }
}
