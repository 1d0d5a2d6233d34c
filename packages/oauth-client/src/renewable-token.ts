import type { OutgoingTrace } from './call-headers';
import type { ClientEvents, RenewalTrigger } from './client-events';
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
  /**
   * Obtains a new token (one request to the token server); `trace` is the request it is made
   * for, when there is one.
   */
  fetch: (trigger: RenewalTrigger, trace?: OutgoingTrace) => Promise<AccessToken>;
  /** A token to start with (a user's token from the code exchange); none: cold. */
  initial?: AccessToken;
  now?: () => number;
  /** Told about a failed background renewal (the current token is still served). */
  onBackgroundError?: (err: unknown) => void;
  events?: ClientEvents;
}

/**
 * - `cold`: no token yet (or the last one was refused downstream)
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
 * - `invalidate(token)`: a downstream refused the token (revoked, or signed with a key the token
 *   server no longer has): it is dropped, and the next caller waits for a new one, shared by
 *   every caller that saw the same refusal.
 * The pending renewal is shared by every caller, so a crowd sends one request.
 */
export class RenewableToken {
  private token: AccessToken | undefined;
  private pending: Promise<AccessToken> | undefined;
  private earlyRetryAt = -Infinity;
  private expiredRetryAt = -Infinity;
  private lastError: unknown;
  private invalidated = false;
  private readonly now: () => number;

  constructor(private readonly options: RenewableTokenOptions) {
    this.now = options.now ?? Date.now;
    this.token = options.initial;
  }

  get clientId(): string {
    return this.options.clientId;
  }

  /** The token held now, whatever its state (for a refresh token or a claim; not to send). */
  get current(): AccessToken | undefined {
    return this.token;
  }

  state(now = this.now()): TokenState {
    if (!this.token) return 'cold';
    if (now >= this.token.expiresAt) return 'expired';
    if (now >= this.token.expiresAt - this.options.tokenRenewBeforeExpired) return 'early';
    return 'fresh';
  }

  /**
   * The token when it can be served at once: fresh, or inside the renewal window (a background
   * renewal is started then, as `get` does). Undefined when callers would have to wait.
   * The hot path of every downstream call: no promise, no timer.
   */
  peek(now = this.now(), trace?: OutgoingTrace): AccessToken | undefined {
    const state = this.state(now);
    if (state === 'fresh') return this.token;
    if (state === 'early') {
      if (!this.pending && now >= this.earlyRetryAt) {
        this.renew('early', trace).catch((err: unknown) => this.options.onBackgroundError?.(err));
      }
      return this.token;
    }
    return undefined;
  }

  async get(trace?: OutgoingTrace): Promise<AccessToken> {
    const now = this.now();
    const ready = this.peek(now, trace);
    if (ready) return ready;
    if (this.pending) return this.pending;
    if (now < this.expiredRetryAt) {
      throw new TokenFetchError('retry_later', {
        clientId: this.options.clientId,
        cause: this.lastError,
      });
    }
    const trigger = this.invalidated ? 'invalid_token' : this.token ? 'expired' : 'cold';
    return this.renew(trigger, trace);
  }

  /**
   * A downstream refused `value`: drop it so that the next caller waits for a new token. A
   * token already replaced (another caller saw the refusal first) is left alone.
   */
  invalidate(value: string): void {
    if (this.token?.value !== value) return;
    this.token = undefined;
    this.invalidated = true;
    // The refusal is news: do not make the next caller wait for an earlier failure's delay.
    this.expiredRetryAt = -Infinity;
  }

  private renew(trigger: RenewalTrigger, trace?: OutgoingTrace): Promise<AccessToken> {
    const { events, clientId } = this.options;
    const startedAt = this.now();
    const pending: Promise<AccessToken> = Promise.resolve()
      .then(() => this.options.fetch(trigger, trace))
      .then(
        (token) => {
          this.token = token;
          this.lastError = undefined;
          this.invalidated = false;
          this.earlyRetryAt = -Infinity;
          this.expiredRetryAt = -Infinity;
          events?.tokenRenewed?.({ clientId, trigger, ms: this.now() - startedAt });
          return token;
        },
        (err: unknown) => {
          this.lastError = err;
          const failedAt = this.now();
          if (trigger === 'early') {
            this.earlyRetryAt = failedAt + this.options.earlyRefreshRetryDelay;
          } else {
            this.expiredRetryAt = failedAt + this.options.expiredRefreshRetryDelay;
          }
          const cause = err instanceof TokenFetchError ? err.code : 'unreachable';
          events?.tokenRenewalFailed?.({ clientId, trigger, cause });
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
