import { BoundedMap } from './bounded-map.js';

/**
 * RFC 9449 section 11.1. Full, the oldest goes and proofs expiring no later are refused, so a
 * replay never gets through.
 */
export class DpopReplayCache {
  private readonly seen: BoundedMap<string, number>;
  private floor = -Infinity;

  constructor(maxEntries: number) {
    this.seen = new BoundedMap(maxEntries, {
      onDrop: (_jti, end) => (this.floor = Math.max(this.floor, end)),
    });
  }

  get size(): number {
    return this.seen.size;
  }

  use(jti: string, expiresAt: number, nowSeconds: number): 'fresh' | 'replayed' | 'forgotten' {
    this.prune(nowSeconds);
    const known = this.seen.get(jti);
    if (known !== undefined && known >= nowSeconds) return 'replayed';
    if (expiresAt <= this.floor) return 'forgotten';
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
