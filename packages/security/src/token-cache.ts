import { isExpired } from './claims';

/**
 * How much of a token keys its entry: its last characters (of a JWT, its signature: random).
 * The whole token is compared with the cached one on every look-up, so a token that only shares
 * the end of a cached one (a forged payload under a copied signature) is not served the entry.
 * A map keyed by the whole token hashes all of it on each look-up (about 1.5 ns a character: a
 * token of 900 characters, two tokens a request at most hops); the tail and one comparison cost
 * a fraction of that.
 */
const KEY_LENGTH = 64;

const keyOf = (token: string): string =>
  token.length > KEY_LENGTH ? token.slice(token.length - KEY_LENGTH) : token;

interface Slot<T> {
  token: string;
  entry: T;
}

/**
 * Verified tokens by their exact text (light-4j: with the cache only the expiry is checked again).
 * Bounded: past `maxEntries` the oldest entry goes. An entry is never served once expired (with
 * the skew): a look-up of an expired entry removes it, and each insert drops expired entries from
 * the old end, so expired tokens do not pile up.
 */
export class TokenCache<T extends { exp: number }> {
  private readonly slots = new Map<string, Slot<T>>();

  constructor(
    private readonly maxEntries: number,
    private readonly skewSeconds: number,
  ) {}

  get size(): number {
    return this.slots.size;
  }

  /** The entry of a token, or undefined when absent or expired at `nowSeconds`. */
  get(token: string, nowSeconds: number): T | undefined {
    const key = keyOf(token);
    const slot = this.slots.get(key);
    if (slot === undefined || slot.token !== token) return undefined;
    if (isExpired(slot.entry.exp, nowSeconds, this.skewSeconds)) {
      this.slots.delete(key);
      return undefined;
    }
    return slot.entry;
  }

  /** Caches a verified token (a cached token with the same last characters makes way). */
  set(token: string, entry: T, nowSeconds: number): void {
    if (this.maxEntries <= 0) return;
    this.prune(nowSeconds);
    const key = keyOf(token);
    this.slots.delete(key);
    while (this.slots.size >= this.maxEntries) {
      this.slots.delete(this.slots.keys().next().value as string);
    }
    this.slots.set(key, { token, entry });
  }

  /** Drops expired entries from the oldest end, a few per call. */
  private prune(nowSeconds: number): void {
    let budget = 8;
    for (const [key, slot] of this.slots) {
      if (budget-- === 0 || !isExpired(slot.entry.exp, nowSeconds, this.skewSeconds)) return;
      this.slots.delete(key);
    }
  }
}
