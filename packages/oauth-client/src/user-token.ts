import type { OutgoingTrace } from './call-headers';
import type { ClientEvents } from './client-events';
import { RenewableToken, type RenewalPolicy, type TokenState } from './renewable-token';
import { TokenFetchError } from './token-fetch-error';
import type { AccessToken } from './token-request';

export interface UserTokenOptions extends RenewalPolicy {
  /** The client the token was issued to (the token server binds the refresh token to it). */
  clientId: string;
  /** One refresh grant request: a new access token, and usually a new refresh token. */
  refresh: (refreshToken: string, trace?: OutgoingTrace) => Promise<AccessToken>;
  now?: () => number;
  events?: ClientEvents;
  onBackgroundError?: (err: unknown) => void;
}

/**
 * A user's token from the code exchange, kept valid without the user by the refresh grant under
 * the own token's renewal rules; a rotated refresh token replaces the old one. A refused refresh
 * token is TokenFetchError `invalid_grant`: the user must sign in again.
 */
export class UserToken {
  private refreshToken: string | undefined;
  private readonly token: RenewableToken;

  constructor(first: AccessToken, options: UserTokenOptions) {
    this.refreshToken = first.refreshToken;
    const { refresh, clientId } = options;
    this.token = new RenewableToken({
      ...options,
      initial: first,
      fetch: async (_trigger, trace) => {
        const refreshToken = this.refreshToken;
        if (!refreshToken) {
          throw new TokenFetchError('invalid_grant', {
            clientId,
            cause: new Error('the token server issued no refresh token'),
          });
        }
        const next = await refresh(refreshToken, trace);
        if (next.refreshToken) this.refreshToken = next.refreshToken;
        return next;
      },
    });
  }

  /** The access token, renewed by the refresh grant when due. Throws TokenFetchError. */
  async get(trace?: OutgoingTrace): Promise<string> {
    return (await this.token.get(trace)).value;
  }

  state(now?: number): TokenState {
    return this.token.state(now);
  }
}
