/**
 * The `jti` of every DPoP proof this process accepted, each until the proof could no longer pass
 * the `iat` window (RFC 9449 section 11.1): a proof seen again within its life is a replay.
 *
 * Bounded: past `maxEntries` the oldest entry goes, and with it every proof that would expire no
 * later than it: the cache then refuses those as too old rather than forget a `jti` that could
 * still be replayed. Under a flood the window that proofs are accepted in shrinks; a replay never
 * gets through. Expired entries are dropped from the old end on each use.
 *
 * One per process: with server.yml `workers` each worker remembers what it accepted only.
 */
export class DpopReplayCache {
  /** jti -> the last second its proof passes the iat window (remembered through it). */
  private readonly seen = new Map<string, number>();
  /** Proofs expiring at or before this second may have been forgotten: refused. */
  private floor = -Infinity;

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.seen.size;
  }

  /**
   * Records a proof's `jti` through `expiresAt` (seconds): `fresh` the first time, `replayed`
   * while it is remembered, `forgotten` when the cache may have dropped it (its life ends no later than
   * that of an entry it had to drop).
   */
  use(jti: string, expiresAt: number, nowSeconds: number): 'fresh' | 'replayed' | 'forgotten' {
    this.prune(nowSeconds);
    const known = this.seen.get(jti);
    if (known !== undefined && known >= nowSeconds) return 'replayed';
    if (expiresAt <= this.floor) return 'forgotten';
    this.seen.delete(jti);
    while (this.seen.size >= this.maxEntries) {
      const [oldest, end] = this.seen.entries().next().value as [string, number];
      this.seen.delete(oldest);
      if (end > this.floor) this.floor = end;
    }
    this.seen.set(jti, expiresAt);
    return 'fresh';
  }

  /** Drops expired entries from the oldest end, a few per call. */
  private prune(nowSeconds: number): void {
    let budget = 8;
    for (const [jti, end] of this.seen) {
      if (budget-- === 0 || end >= nowSeconds) return;
      this.seen.delete(jti);
    }
  }
}
