import { isExpired } from './claims';

/**
 * Verified tokens by their exact text (light-4j: with the cache only the expiry is checked again).
 * Bounded: past `maxEntries` the oldest entry goes. An entry is never served once expired (with
 * the skew): a look-up of an expired entry removes it, and each insert drops expired entries from
 * the old end, so expired tokens do not pile up.
 */
export class TokenCache<T extends { exp: number }> {
  private readonly entries = new Map<string, T>();

  constructor(
    readonly maxEntries: number,
    private readonly skewSeconds: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The entry of a token, or undefined when absent or expired at `nowSeconds`. */
  get(token: string, nowSeconds: number): T | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (isExpired(entry.exp, nowSeconds, this.skewSeconds)) {
      this.entries.delete(token);
      return undefined;
    }
    return entry;
  }

  set(token: string, entry: T, nowSeconds: number): void {
    if (this.maxEntries <= 0) return;
    this.prune(nowSeconds);
    this.entries.delete(token);
    while (this.entries.size >= this.maxEntries) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
    this.entries.set(token, entry);
  }

  /** Drops expired entries from the oldest end, a few per call. */
  private prune(nowSeconds: number): void {
    let budget = 8;
    for (const [token, entry] of this.entries) {
      if (budget-- === 0 || !isExpired(entry.exp, nowSeconds, this.skewSeconds)) return;
      this.entries.delete(token);
    }
  }
}
