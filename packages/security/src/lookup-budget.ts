import { LOOKUP_BURST, LOOKUP_INTERVAL_MS, MAX_KIDS } from './key-policy';

/** Asks are counted per minute: the counts start again every minute. */
const WINDOW_MS = 60_000;

/**
 * The look-ups a key server is asked for kids nobody knows yet: LOOKUP_BURST at once, then one
 * per LOOKUP_INTERVAL_MS (a token bucket), each going to the kid asked for most often this
 * minute, the asking kid on a tie (README "Keys and the key server": why).
 */
export class LookupBudget {
  private tokens = LOOKUP_BURST;
  private refilledAt: number;
  private countedSince: number;
  private readonly asked = new Map<string, number>();

  constructor(now: number) {
    this.refilledAt = this.countedSince = now;
  }

  /**
   * Counts an ask for `kid` and, when a look-up is free, spends it: returns the kid to look up
   * now (`kid` itself, or one asked for more often), or undefined when none is free.
   */
  take(kid: string, now: number): string | undefined {
    if (now - this.countedSince >= WINDOW_MS) {
      this.asked.clear();
      this.countedSince = now;
    }
    this.count(kid);
    this.tokens = Math.min(
      LOOKUP_BURST,
      this.tokens + (now - this.refilledAt) / LOOKUP_INTERVAL_MS,
    );
    this.refilledAt = now;
    if (this.tokens < 1) return undefined;
    this.tokens -= 1;
    let chosen = kid;
    for (const [other, count] of this.asked) if (count > this.asked.get(chosen)!) chosen = other;
    return chosen;
  }

  /** A kid that was looked up (found or not) waits no more. */
  forget(kid: string): void {
    this.asked.delete(kid);
  }

  /** A full map makes room by dropping the oldest kid asked for once (as made-up kids are). */
  private count(kid: string): void {
    const count = this.asked.get(kid);
    if (count === undefined && this.asked.size >= MAX_KIDS) {
      let drop = this.asked.keys().next().value as string;
      for (const [other, n] of this.asked) {
        if (n === 1) {
          drop = other;
          break;
        }
      }
      this.asked.delete(drop);
    }
    this.asked.set(kid, (count ?? 0) + 1);
  }
}
