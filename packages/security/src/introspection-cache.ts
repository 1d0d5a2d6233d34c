import { LRUCache } from 'lru-cache';
import type { Clock } from './clock';

/**
 * Introspection answers by key (the verifier's digest of the token and the asking client), with
 * the call in flight shared:
 *
 * - **Single flight**: while a key's call is pending, every request with that key waits for it;
 *   no second call is made.
 * - **Kept until**: an answer is kept while `lifeOf(answer)` says (the token's `exp`), and never
 *   longer than `maxAgeMs` after its call was made, so that a token revoked at the server is
 *   refused within `maxAgeMs` whatever its `exp` (RFC 7662 section 4). `lifeOf` undefined (an
 *   inactive answer), a life already over, `maxAgeMs` 0 or `maxEntries` 0: not kept.
 * - **Failures** are never kept: the pending call is dropped and the next request asks again.
 * - **Bounded**: at most `maxEntries` answers in lru-cache (the least recently used goes first;
 *   an expired answer is never served, and is dropped when looked up).
 *
 * lru-cache's own `fetch` also shares calls in flight, but keeps a fetched value only with a
 * positive TTL and would have to be told to drop inactive answers after the fact; the pending
 * map here is the few lines that say exactly what is kept.
 */
export class IntrospectionCache<T> {
  private readonly kept?: LRUCache<string, { answer: T }>;
  private readonly pending = new Map<string, Promise<T>>();

  constructor(
    maxEntries: number,
    private readonly maxAgeMs: number,
    private readonly now: Clock,
  ) {
    if (maxEntries > 0 && maxAgeMs > 0) {
      // The cache's clock is the service's (tests move it); no cached reading of it.
      this.kept = new LRUCache({ max: maxEntries, perf: { now }, ttlResolution: 0 });
    }
  }

  /** Answers kept (not the calls in flight). */
  get size(): number {
    return this.kept?.size ?? 0;
  }

  /**
   * The answer of `key`: a kept one, the pending call's, or a new call of `ask`.
   * `lifeOf(answer)`: until when (epoch ms) it may be kept; undefined: not kept.
   */
  answer(
    key: string,
    ask: () => Promise<T>,
    lifeOf: (answer: T) => number | undefined,
  ): Promise<T> {
    const hit = this.kept?.get(key);
    if (hit !== undefined) return Promise.resolve(hit.answer);
    const inFlight = this.pending.get(key);
    if (inFlight !== undefined) return inFlight;
    const startedAt = this.now();
    const call = ask().then(
      (answer) => {
        this.pending.delete(key);
        const life = lifeOf(answer);
        if (life !== undefined) this.keep(key, answer, Math.min(life, startedAt + this.maxAgeMs));
        return answer;
      },
      (err: unknown) => {
        this.pending.delete(key);
        throw err;
      },
    );
    this.pending.set(key, call);
    return call;
  }

  /** Kept until `until` (epoch ms), not served from that millisecond on. */
  private keep(key: string, answer: T, until: number): void {
    // lru-cache serves an entry while `now - start <= ttl`.
    const ttl = until - this.now() - 1;
    if (this.kept && ttl > 0) this.kept.set(key, { answer }, { ttl });
  }
}
