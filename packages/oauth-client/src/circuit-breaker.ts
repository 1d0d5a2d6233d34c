/** `closed`: calls go; `open`: calls fail at once; `half_open`: one trial call is out. */
export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  /** Failures in a row that open the circuit (client.yml `request.errorThreshold`); 0: never. */
  errorThreshold: number;
  /** How long an open circuit refuses calls before one trial (`request.resetTimeout`), ms. */
  resetTimeoutMs: number;
  now?: () => number;
  /** Told of every change of state. */
  onStateChange?: (state: CircuitState, previous: CircuitState) => void;
}

/**
 * The circuit breaker of one downstream, as light-4j's client.yml describes it
 * (`errorThreshold`, `resetTimeout`), with what light-4j's own lacks: it is per downstream (not
 * one counter for the process), and a half-open circuit lets exactly one trial call through.
 *
 * - closed: every call goes; `errorThreshold` failures in a row open it (a success resets the
 *   count).
 * - open: calls are refused at once until `resetTimeout` has passed since it opened.
 * - half-open: the first call after that is the trial; others are refused while it runs. Its
 *   success closes the circuit, its failure opens it again for another `resetTimeout`.
 *
 * Every call `acquire` lets through must end in `success()` or `failure()`.
 */
export class CircuitBreaker {
  private current: CircuitState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private trialOut = false;
  private readonly now: () => number;

  constructor(private readonly options: CircuitBreakerOptions) {
    this.now = options.now ?? Date.now;
  }

  get state(): CircuitState {
    return this.current;
  }

  /** Milliseconds until an open circuit lets a trial call through (0 when not open). */
  retryInMs(): number {
    if (this.current !== 'open') return 0;
    return Math.max(0, this.openedAt + this.options.resetTimeoutMs - this.now());
  }

  /** Whether a call may go now; false means fail at once. */
  acquire(): boolean {
    if (this.current === 'closed') return true;
    if (this.current === 'open') {
      if (this.now() - this.openedAt < this.options.resetTimeoutMs) return false;
      this.move('half_open');
      this.trialOut = true;
      return true;
    }
    // half-open: only the one trial call.
    if (this.trialOut) return false;
    this.trialOut = true;
    return true;
  }

  success(): void {
    this.failures = 0;
    this.trialOut = false;
    if (this.current !== 'closed') this.move('closed');
  }

  failure(): void {
    this.trialOut = false;
    if (this.options.errorThreshold <= 0) return;
    if (this.current === 'half_open') {
      this.open();
      return;
    }
    this.failures += 1;
    if (this.current === 'closed' && this.failures >= this.options.errorThreshold) this.open();
  }

  private open(): void {
    this.openedAt = this.now();
    this.move('open');
  }

  private move(state: CircuitState): void {
    const previous = this.current;
    this.current = state;
    this.options.onStateChange?.(state, previous);
  }
}
