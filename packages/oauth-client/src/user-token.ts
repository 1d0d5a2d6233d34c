import type { OutgoingTrace } from './call-headers';
import { RenewableToken, type RenewableTokenOptions, type TokenState } from './renewable-token';
import { TokenFetchError } from './token-fetch-error';
import type { AccessToken } from './token-request';

export interface UserTokenOptions extends Omit<RenewableTokenOptions, 'fetch' | 'initial'> {
  /** One refresh grant request, as the client the code was issued to. */
  refresh: (refreshToken: string, trace?: OutgoingTrace) => Promise<AccessToken>;
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
