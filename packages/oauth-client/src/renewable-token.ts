import { TokenFetchError } from './token-fetch-error';
import type { AccessToken } from './token-request';

/** client.yml `oauth.token` renewal settings, in milliseconds. */
export interface RenewalPolicy {
  tokenRenewBeforeExpired: number;
  expiredRefreshRetryDelay: number;
  earlyRefreshRetryDelay: number;
}

export interface RenewableTokenOptions extends RenewalPolicy {
  clientId: string;
  /** Obtains a new token (one request to the token server). */
  fetch: () => Promise<AccessToken>;
  now?: () => number;
  /** Told about a failed background renewal (the current token is still served). */
  onBackgroundError?: (err: unknown) => void;
}

/**
 * - `cold`: no token yet
 * - `fresh`: before the renewal window
 * - `early`: inside the renewal window (`tokenRenewBeforeExpired` before expiry), not expired
 * - `expired`
 */
export type TokenState = 'cold' | 'fresh' | 'early' | 'expired';

/**
 * One cached token and its renewal, as light-4j's client does it:
 * - fresh: the token is served.
 * - early: the token is served while one background renewal runs; after a failed one, the next
 *   starts no sooner than `earlyRefreshRetryDelay` after that failure.
 * - cold or expired: callers wait for one shared renewal; after a failed one, callers fail at
 *   once (`retry_later`) until `expiredRefreshRetryDelay` has passed since that failure.
 * The pending renewal is shared by every caller, so a crowd sends one request.
 */
export class RenewableToken {
  private token: AccessToken | undefined;
  private pending: Promise<AccessToken> | undefined;
  private earlyRetryAt = -Infinity;
  private expiredRetryAt = -Infinity;
  private lastError: unknown;
  private readonly now: () => number;

  constructor(private readonly options: RenewableTokenOptions) {
    this.now = options.now ?? Date.now;
  }

  state(now = this.now()): TokenState {
    if (!this.token) return 'cold';
    if (now >= this.token.expiresAt) return 'expired';
    if (now >= this.token.expiresAt - this.options.tokenRenewBeforeExpired) return 'early';
    return 'fresh';
  }

  /** Whether a renewal is in flight. */
  get renewing(): boolean {
    return this.pending !== undefined;
  }

  /** The renewal in flight, if any: settles when it does (what a caller waits on, not a timer). */
  get renewal(): Promise<AccessToken> | undefined {
    return this.pending;
  }

  /**
   * The token when it can be served at once: fresh, or inside the renewal window (a background
   * renewal is started then, as `get` does). Undefined when callers would have to wait.
   * The hot path of every downstream call: no promise, no timer.
   */
  peek(now = this.now()): AccessToken | undefined {
    const state = this.state(now);
    if (state === 'fresh') return this.token;
    if (state === 'early') {
      if (!this.pending && now >= this.earlyRetryAt) {
        this.renew('early').catch((err: unknown) => this.options.onBackgroundError?.(err));
      }
      return this.token;
    }
    return undefined;
  }

  async get(): Promise<AccessToken> {
    const now = this.now();
    const ready = this.peek(now);
    if (ready) return ready;
    if (this.pending) return this.pending;
    if (now < this.expiredRetryAt) {
      throw new TokenFetchError('retry_later', {
        clientId: this.options.clientId,
        cause: this.lastError,
      });
    }
    return this.renew('expired');
  }

  private renew(kind: 'early' | 'expired'): Promise<AccessToken> {
    const pending: Promise<AccessToken> = Promise.resolve()
      .then(() => this.options.fetch())
      .then(
        (token) => {
          this.token = token;
          this.lastError = undefined;
          this.earlyRetryAt = -Infinity;
          this.expiredRetryAt = -Infinity;
          return token;
        },
        (err: unknown) => {
          this.lastError = err;
          const failedAt = this.now();
          if (kind === 'early') this.earlyRetryAt = failedAt + this.options.earlyRefreshRetryDelay;
          else this.expiredRetryAt = failedAt + this.options.expiredRefreshRetryDelay;
          throw err;
        },
      )
      .finally(() => {
        this.pending = undefined;
      });
    this.pending = pending;
    return pending;
  }
}
