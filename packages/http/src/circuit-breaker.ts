export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  errorThreshold: number;
  resetTimeoutMs: number;
  now?: () => number;
  onStateChange?: (state: CircuitState, previous: CircuitState) => void;
}

/** Every call `acquire` lets through must end in `success()` or `failure()`. */
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

  retryInMs(): number {
    if (this.current !== 'open') return 0;
    return Math.max(0, this.openedAt + this.options.resetTimeoutMs - this.now());
  }

  acquire(): boolean {
    if (this.current === 'closed') return true;
    if (this.current === 'open') {
      if (this.now() - this.openedAt < this.options.resetTimeoutMs) return false;
      this.move('half_open');
    } else if (this.trialOut) {
      return false;
    }
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
    this.failures += 1;
    if (this.current === 'half_open') this.open();
    else if (this.current === 'closed' && this.failures >= this.options.errorThreshold) this.open();
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
