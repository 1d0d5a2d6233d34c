/**
 * RFC 9449 section 11.1. Full, the oldest goes and proofs expiring no later are refused, so a
 * replay never gets through. A Map: lru-cache would allocate its bound at start.
 */
export class DpopReplayCache {
  private readonly seen = new Map<string, number>();
  private floor = -Infinity;

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.seen.size;
  }

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

  private prune(nowSeconds: number): void {
    let budget = 8;
    for (const [jti, end] of this.seen) {
      if (budget-- === 0 || end >= nowSeconds) return;
      this.seen.delete(jti);
    }
  }
}
