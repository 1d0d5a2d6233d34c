import type { Algorithm } from './algorithms';
import type { Clock } from './clock';
import { answerWithin, keyUnavailable, setBounded, unknownKid } from './key-errors';
import {
  FAILURE_TTL_MS,
  NOT_FOUND_TTL_MS,
  REFETCH_COOLDOWN_MS,
  refreshAgeMs,
  type KeyPolicy,
} from './key-policy';
import type { KeyEvents, KeySource } from './key-source';
import { LookupBudget } from './lookup-budget';
import {
  importPublicKey,
  verificationKey,
  type KeyMaterial,
  type VerificationKey,
} from './public-key';

/** Keys fetched from a key server, as the key store asks for them. */
export interface FetchedKeys {
  /** The key of a kid when held and not past its maximum age; never waits. */
  current(kid: string): VerificationKey | undefined;
  /** The key of a kid, fetched if needed: TokenError (unknown kid) or ERR20005. */
  resolve(kid: string): Promise<VerificationKey>;
  /** After `stale` failed a signature check: a different key for the kid, when one can be had now. */
  refetch(kid: string, stale: VerificationKey): Promise<VerificationKey | undefined>;
}

export interface FetchedKeysOptions {
  policy: KeyPolicy;
  now: Clock;
  algorithms: readonly Algorithm[];
  events?: KeyEvents;
}

interface Entry {
  key: VerificationKey;
  fetchedAt: number;
}

interface Miss {
  until: number;
  /** Set when the look-up failed; absent when the server said it has no such kid. */
  failure?: unknown;
}

/**
 * light-oauth2's key service, one kid per request (`GET {uri}/{kid}`). Each kid is fetched once
 * at a time (single flight) and kept for `maxAgeMs`, refreshed in the background from three
 * quarters of it; a kid the server does not know is remembered NOT_FOUND_TTL_MS, a failure
 * FAILURE_TTL_MS. Kids nobody knows yet share a LookupBudget, so a flood of made-up kids costs
 * the key server one request a second and cannot keep out a kid it really has; kids already
 * known are refreshed outside that budget.
 */
export class KidLookups implements FetchedKeys {
  private readonly entries = new Map<string, Entry>();
  private readonly misses = new Map<string, Miss>();
  private readonly flights = new Map<string, Promise<Entry | undefined>>();
  private readonly refetchedAt = new Map<string, number>();
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
    if (age >= refreshAgeMs(policy) && !this.flights.has(kid) && !this.failing(kid, at)) {
      // Refreshed while still in use; a failure is remembered (no retry per request).
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
      throw unknownKid();
    }
    // A kid already known (past its maximum age) is fetched again outside the budget.
    if (this.entries.has(kid)) return found(await this.start(kid));
    const chosen = this.budget.take(kid, at);
    if (chosen === undefined) throw unknownKid('unknown kid; key look-ups are rate-limited');
    if (chosen !== kid) {
      // The free look-up goes to a kid asked for more often; its callers get it next time.
      if (!this.flights.has(chosen)) this.start(chosen).catch(() => undefined);
      throw unknownKid('unknown kid; a kid asked for more often is looked up first');
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
    setBounded(this.refetchedAt, kid, at);
    const flight = this.flights.get(kid) ?? this.start(kid);
    const fresh = await flight.catch(() => undefined);
    return fresh && !sameKey(fresh.key, stale) ? fresh.key : undefined;
  }

  private failing(kid: string, at: number): boolean {
    const miss = this.misses.get(kid);
    return miss !== undefined && miss.failure !== undefined && miss.until > at;
  }

  private start(kid: string): Promise<Entry | undefined> {
    const flight = this.fetch(kid);
    this.flights.set(kid, flight);
    const done = () => this.flights.delete(kid);
    flight.then(done, done);
    return flight;
  }

  private async fetch(kid: string): Promise<Entry | undefined> {
    const { policy, now, events } = this.options;
    let publicKey;
    try {
      const material = await answerWithin(this.source.fetch(kid), policy.timeoutMs);
      // An answer that is not a public key is a key server failure.
      if (material !== undefined) publicKey = await importPublicKey(material);
    } catch (err) {
      setBounded(this.misses, kid, { until: now() + FAILURE_TTL_MS, failure: err });
      events?.warn({ kid, err }, 'key look-up failed');
      throw keyUnavailable(kid, err);
    } finally {
      this.budget.forget(kid);
    }
    const key = publicKey && (await usable(kid, publicKey, this.options));
    if (key === undefined) {
      if (this.entries.delete(kid)) events?.info({ kid }, 'key retired by the key server');
      setBounded(this.misses, kid, { until: now() + NOT_FOUND_TTL_MS });
      return undefined;
    }
    this.misses.delete(kid);
    const previous = this.entries.get(kid);
    // The same key again keeps its identity, so tokens it verified stay cached.
    const entry = { key: sameKey(previous?.key, key) ? previous!.key : key, fetchedAt: now() };
    setBounded(this.entries, kid, entry);
    if (!previous) events?.info({ kid }, 'key fetched from the key server');
    return entry;
  }
}

/**
 * A key of a key server as a verification key (jose imports a JWK). A key jwt.algorithms does
 * not allow, or one that cannot be read, verifies nothing: its kid is treated as unknown (401),
 * and the operator is told why.
 */
export async function usable(
  kid: string,
  material: KeyMaterial,
  options: FetchedKeysOptions,
  pinned?: unknown,
): Promise<VerificationKey | undefined> {
  try {
    return verificationKey(await importPublicKey(material), options.algorithms, pinned);
  } catch (err) {
    options.events?.warn({ kid, reason: (err as Error).message }, 'key of the key server not used');
    return undefined;
  }
}

/** Whether two verification keys are the same key for the same algorithms. */
export function sameKey(a: VerificationKey | undefined, b: VerificationKey): boolean {
  return (
    a !== undefined &&
    a.key.equals(b.key) &&
    a.algorithms.length === b.algorithms.length &&
    a.algorithms.every((alg) => b.algorithms.includes(alg))
  );
}

function found(entry: Entry | undefined): VerificationKey {
  if (!entry) throw unknownKid();
  return entry.key;
}
