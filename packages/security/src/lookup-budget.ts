/** How long a kid that was asked for counts as waiting for a look-up. */
export const ASKED_WINDOW_MS = 60_000;

interface Asked {
  count: number;
  lastAt: number;
}

/**
 * The look-ups a key server is asked for kids nobody knows yet: a token bucket (`burst` at
 * once, then one per `intervalMs`), and when a look-up is free it goes to the kid asked for most
 * often in the last minute, the asking kid on a tie.
 *
 * Why: a flood of made-up kids asks for each once, while a kid the key server really published
 * is asked for again and again (every client holding a new token sends it). First come, first
 * served would let the flood take every look-up; counted this way, a real kid asked for twice
 * goes ahead of every made-up kid asked for once, and a made-up kid, once looked up, is
 * remembered as unknown (the caller's negative cache) and drops out.
 */
export class LookupBudget {
  private tokens: number;
  private refilledAt: number;
  private readonly asked = new Map<string, Asked>();

  constructor(
    private readonly burst: number,
    private readonly intervalMs: number,
    private readonly maxEntries: number,
    now: number,
  ) {
    this.tokens = burst;
    this.refilledAt = now;
  }

  /** Kids waiting for a look-up (for tests and logs). */
  get waiting(): number {
    return this.asked.size;
  }

  /**
   * Counts a request for `kid` and, when a look-up is free, spends it: returns the kid to look
   * up now (`kid` itself, or one asked for more often), or undefined when none is free.
   */
  take(kid: string, now: number): string | undefined {
    this.note(kid, now);
    this.tokens = Math.min(
      this.burst,
      this.tokens + Math.max(0, now - this.refilledAt) / this.intervalMs,
    );
    this.refilledAt = now;
    if (this.tokens < 1) return undefined;
    this.tokens -= 1;
    return this.mostAsked(kid, now);
  }

  /** A kid that was looked up (found or not) waits no more. */
  forget(kid: string): void {
    this.asked.delete(kid);
  }

  private note(kid: string, now: number): void {
    const entry = this.asked.get(kid);
    if (entry) {
      entry.count += 1;
      entry.lastAt = now;
      return;
    }
    if (this.asked.size >= this.maxEntries) this.evict();
    this.asked.set(kid, { count: 1, lastAt: now });
  }

  /** Makes room: the oldest kid asked for only once, else the oldest. */
  private evict(): void {
    let scanned = 0;
    for (const [kid, entry] of this.asked) {
      if (entry.count === 1) {
        this.asked.delete(kid);
        return;
      }
      if (++scanned >= 64) break;
    }
    this.asked.delete(this.asked.keys().next().value as string);
  }

  private mostAsked(kid: string, now: number): string {
    let best = kid;
    let bestCount = this.asked.get(kid)!.count;
    for (const [candidate, entry] of this.asked) {
      if (now - entry.lastAt > ASKED_WINDOW_MS) {
        this.asked.delete(candidate);
      } else if (entry.count > bestCount) {
        best = candidate;
        bestCount = entry.count;
      }
    }
    return best;
  }
}
