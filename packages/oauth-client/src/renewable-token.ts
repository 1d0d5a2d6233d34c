import { StatusError } from '@chain/errors';
import type { OutgoingTrace } from './call-headers.js';
import type { ClientEvents, RenewalTrigger } from './client-events.js';
import type { DpopKey } from './dpop-key.js';
import { TokenFetchError } from './token-fetch-error.js';
import type { AccessToken } from './token-request.js';

export interface RenewableTokenOptions {
  clientId: string;
  tokenRenewBeforeExpired: number;
  expiredRefreshRetryDelay: number;
  earlyRefreshRetryDelay: number;
  fetch: (trigger: RenewalTrigger, trace?: OutgoingTrace) => Promise<AccessToken>;
  initial?: AccessToken;
  now?: () => number;
  onBackgroundError?: (err: unknown) => void;
  events?: ClientEvents;
}

/** `cold`: no token (or it was refused downstream); `early`: in the renewal window. */
export type TokenState = 'cold' | 'fresh' | 'early' | 'expired';

/** One cached token and its renewal, as light-4j's client does it (README's module table). */
export class RenewableToken {
  private token: AccessToken | undefined;
  private pending: Promise<AccessToken> | undefined;
  private earlyRetryAt = -Infinity;
  private expiredRetryAt = -Infinity;
  private lastError: unknown;
  private invalidated = false;
  readonly now: () => number;

  constructor(readonly options: RenewableTokenOptions) {
    this.now = options.now ?? Date.now;
    this.token = options.initial;
  }

  state(now = this.now()): TokenState {
    if (!this.token) return 'cold';
    if (now >= this.token.expiresAt) return 'expired';
    if (now >= this.token.expiresAt - this.options.tokenRenewBeforeExpired) return 'early';
    return 'fresh';
  }

  /** The token when it can be served at once: the hot path, no promise, no timer. */
  peek(now = this.now(), trace?: OutgoingTrace): AccessToken | undefined {
    const state = this.state(now);
    if (state === 'early' && !this.pending && now >= this.earlyRetryAt) {
      this.renew('early', trace).catch((err: unknown) => this.options.onBackgroundError?.(err));
    }
    return state === 'fresh' || state === 'early' ? this.token : undefined;
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

  /** A downstream refused `value`: the next callers share one renewal. */
  invalidate(value: string): void {
    if (this.token?.value !== value) return;
    this.token = undefined;
    this.invalidated = true;
    this.expiredRetryAt = -Infinity;
  }

  private renew(trigger: RenewalTrigger, trace?: OutgoingTrace): Promise<AccessToken> {
    this.pending = this.fetch(trigger, trace).finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async fetch(trigger: RenewalTrigger, trace?: OutgoingTrace): Promise<AccessToken> {
    const { events, clientId } = this.options;
    const startedAt = this.now();
    let token: AccessToken;
    try {
      token = await this.options.fetch(trigger, trace);
    } catch (err) {
      this.lastError = err;
      if (trigger === 'early') this.earlyRetryAt = this.now() + this.options.earlyRefreshRetryDelay;
      else this.expiredRetryAt = this.now() + this.options.expiredRefreshRetryDelay;
      const cause = err instanceof TokenFetchError ? err.code : 'unreachable';
      events?.tokenRenewalFailed?.({ clientId, trigger, cause });
      throw err;
    }
    this.token = token;
    this.lastError = undefined;
    this.invalidated = false;
    this.earlyRetryAt = -Infinity;
    this.expiredRetryAt = -Infinity;
    events?.tokenRenewed?.({ clientId, trigger, ms: this.now() - startedAt });
    return token;
  }
}

/** The own token of one client at one auth server, shared by the calls of its downstreams. */
export class TokenSource {
  constructor(
    private readonly token: RenewableToken,
    /** The key its tokens are bound to (DPoP): every call with them carries a new proof. */
    readonly dpop?: DpopKey,
  ) {}

  get clientId(): string {
    return this.token.options.clientId;
  }

  async get(trace?: OutgoingTrace): Promise<string> {
    const ready = this.token.peek(undefined, trace);
    if (ready) return ready.value;
    const { now, options } = this.token;
    const startedAt = now();
    let ok = false;
    try {
      const { value } = await this.token.get(trace);
      ok = true;
      return value;
    } catch (err) {
      throw new StatusError('ERR10009', [], { cause: err });
    } finally {
      options.events?.tokenWaited?.({ clientId: options.clientId, ms: now() - startedAt, ok });
    }
  }

  invalidate(value: string): void {
    this.token.invalidate(value);
  }
}

export interface UserTokenOptions extends Omit<RenewableTokenOptions, 'fetch' | 'initial'> {
  refresh: (refreshToken: string, trace?: OutgoingTrace) => Promise<AccessToken>;
}

/** Renewed by the refresh grant; a rotated refresh token replaces the old one. */
export class UserToken {
  private readonly token: RenewableToken;

  constructor(first: AccessToken, options: UserTokenOptions) {
    let { refreshToken } = first;
    this.token = new RenewableToken({
      ...options,
      initial: first,
      fetch: async (_trigger, trace) => {
        if (!refreshToken) {
          throw new TokenFetchError('invalid_grant', {
            clientId: options.clientId,
            cause: new Error('the token server issued no refresh token'),
          });
        }
        const next = await options.refresh(refreshToken, trace);
        refreshToken = next.refreshToken ?? refreshToken;
        return next;
      },
    });
  }

  async get(trace?: OutgoingTrace): Promise<string> {
    return (await this.token.get(trace)).value;
  }

  state(now?: number): TokenState {
    return this.token.state(now);
  }
}
