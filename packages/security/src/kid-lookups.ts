import {
  answerWithin,
  FAILURE_TTL_MS,
  keyUnavailable,
  LOOKUP_BURST,
  LOOKUP_INTERVAL_MS,
  MAX_KIDS,
  NOT_FOUND_TTL_MS,
  REFETCH_COOLDOWN_MS,
  refreshAgeMs,
  sameKey,
  usable,
  type FetchedKeysOptions,
} from './key-policy.js';
import { BoundedMap } from './bounded-map.js';
import type { KeySource } from './key-source.js';
import { importPublicKey, type VerificationKey } from './public-key.js';
import { invalidToken } from './token-error.js';

interface Entry {
  key: VerificationKey;
  fetchedAt: number;
}

interface Miss {
  until: number;
  /** Absent when the server said it has no such kid. */
  failure?: unknown;
}

/** light-oauth2's key service, one kid per request; made-up kids cannot keep out a real one. */
export class KidLookups {
  private readonly entries = new BoundedMap<string, Entry>(MAX_KIDS);
  private readonly misses = new BoundedMap<string, Miss>(MAX_KIDS);
  private readonly flights = new Map<string, Promise<Entry | undefined>>();
  private readonly refetchedAt = new BoundedMap<string, number>(MAX_KIDS);
  private readonly budget: LookupBudget;

  constructor(
    private readonly source: Extract<KeySource, { kind: 'kid' }>,
    private readonly options: FetchedKeysOptions,
  ) {
    this.budget = new LookupBudget(options.now());
  }

  current(kid: string): VerificationKey | undefined {
    const entry = this.entries.get(kid);
    if (!entry) return undefined;
    const { policy, now } = this.options;
    const at = now();
    const age = at - entry.fetchedAt;
    if (age >= policy.maxAgeMs) return undefined;
    const failed = this.misses.get(kid);
    const failing = failed?.failure !== undefined && failed.until > at;
    if (age >= refreshAgeMs(policy) && !this.flights.has(kid) && !failing) {
      this.start(kid).catch(() => undefined);
    }
    return entry.key;
  }

  async resolve(kid: string): Promise<VerificationKey> {
    const held = this.current(kid);
    if (held) return held;
    const flight = this.flights.get(kid);
    if (flight) return found(await flight);
    const at = this.options.now();
    const miss = this.misses.get(kid);
    if (miss && miss.until > at) {
      if (miss.failure !== undefined) throw keyUnavailable(kid, miss.failure);
      throw invalidToken('unknown kid');
    }
    if (this.entries.has(kid)) return found(await this.start(kid));
    const chosen = this.budget.take(kid, at);
    if (chosen === undefined) throw invalidToken('unknown kid; key look-ups are rate-limited');
    if (chosen !== kid) {
      if (!this.flights.has(chosen)) this.start(chosen).catch(() => undefined);
      throw invalidToken('unknown kid; a kid asked for more often is looked up first');
    }
    return found(await this.start(kid));
  }

  async refetch(kid: string, stale: VerificationKey): Promise<VerificationKey | undefined> {
    const entry = this.entries.get(kid);
    if (!entry) return undefined;
    if (entry.key !== stale) return entry.key;
    const at = this.options.now();
    const last = this.refetchedAt.get(kid);
    if (last !== undefined && at - last < REFETCH_COOLDOWN_MS) return undefined;
    this.refetchedAt.set(kid, at);
    const flight = this.flights.get(kid) ?? this.start(kid);
    const fresh = await flight.catch(() => undefined);
    return fresh && !sameKey(fresh.key, stale) ? fresh.key : undefined;
  }

  private start(kid: string): Promise<Entry | undefined> {
    const flight = this.fetch(kid).finally(() => this.flights.delete(kid));
    this.flights.set(kid, flight);
    return flight;
  }

  private async fetch(kid: string): Promise<Entry | undefined> {
    const { policy, now, events } = this.options;
    let publicKey;
    try {
      const material = await answerWithin(this.source.fetch(kid), policy.timeoutMs);
      if (material !== undefined) publicKey = await importPublicKey(material);
    } catch (err) {
      this.misses.set(kid, { until: now() + FAILURE_TTL_MS, failure: err });
      events?.warn({ kid, err }, 'key look-up failed');
      throw keyUnavailable(kid, err);
    } finally {
      this.budget.forget(kid);
    }
    const key = publicKey && (await usable(kid, publicKey, this.options));
    if (key === undefined) {
      if (this.entries.delete(kid)) events?.info({ kid }, 'key retired by the key server');
      this.misses.set(kid, { until: now() + NOT_FOUND_TTL_MS });
      return undefined;
    }
    this.misses.delete(kid);
    const previous = this.entries.get(kid);
    // The same key again keeps its identity, so tokens it verified stay cached.
    const entry = { key: sameKey(previous?.key, key) ? previous!.key : key, fetchedAt: now() };
    this.entries.set(kid, entry);
    if (!previous) events?.info({ kid }, 'key fetched from the key server');
    return entry;
  }
}

function found(entry: Entry | undefined): VerificationKey {
  if (!entry) throw invalidToken('unknown kid');
  return entry.key;
}

const WINDOW_MS = 60_000;

/** A token bucket; each look-up goes to the kid asked for most this minute, the asker on a tie. */
export class LookupBudget {
  private tokens = LOOKUP_BURST;
  private refilledAt: number;
  private countedSince: number;
  /** Full, the oldest kid asked for once goes (as made-up kids are), else the oldest. */
  private readonly asked = new BoundedMap<string, number>(MAX_KIDS, { victim: kidToDrop });

  constructor(now: number) {
    this.refilledAt = this.countedSince = now;
  }

  take(kid: string, now: number): string | undefined {
    if (now - this.countedSince >= WINDOW_MS) {
      this.asked.clear();
      this.countedSince = now;
    }
    this.asked.set(kid, (this.asked.get(kid) ?? 0) + 1);
    const refill = (now - this.refilledAt) / LOOKUP_INTERVAL_MS;
    this.tokens = Math.min(LOOKUP_BURST, this.tokens + refill);
    this.refilledAt = now;
    if (this.tokens < 1) return undefined;
    this.tokens -= 1;
    let chosen = kid;
    for (const [other, count] of this.asked) if (count > this.asked.get(chosen)!) chosen = other;
    return chosen;
  }

  forget(kid: string): void {
    this.asked.delete(kid);
  }
}

function kidToDrop(asked: Map<string, number>): string {
  for (const [kid, n] of asked) if (n === 1) return kid;
  return asked.keys().next().value as string;
}
