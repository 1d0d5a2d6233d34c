/**
 * Why a token was refused, before it is known which header it came from: `invalid` becomes
 * ERR10000 (Authorization) or ERR10003 (X-Scope-Token), `expired` ERR10001 or ERR10004. The
 * message is a fixed reason for the log; it never holds any part of the token.
 */
export class TokenError extends Error {
  override readonly name = 'TokenError';

  constructor(
    readonly kind: 'invalid' | 'expired',
    reason: string,
  ) {
    super(reason);
  }
}

export const invalidToken = (reason: string) => new TokenError('invalid', reason);
