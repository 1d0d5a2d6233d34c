import { BoundedMap } from './bounded-map.js';

export type ReplayVerdict = 'fresh' | 'replayed' | 'forgotten';

/**
 * Remembers each accepted proof's `jti` until `expiresAt` (seconds). A store that cannot answer
 * throws (the proof is refused with what it throws, never let through).
 */
export interface ReplayStore {
  use(jti: string, expiresAt: number, nowSeconds: number): ReplayVerdict | Promise<ReplayVerdict>;
}

/**
 * RFC 9449 section 11.1. Full, the oldest goes and proofs expiring no later are refused, so a
 * replay never gets through.
 */
export class DpopReplayCache implements ReplayStore {
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

  use(jti: string, expiresAt: number, nowSeconds: number): ReplayVerdict {
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
