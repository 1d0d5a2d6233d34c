import { errors } from 'jose';

/**
 * Why a token was refused, before it is known which header it came from: `invalid` becomes
 * ERR10000 (Authorization) or ERR10003 (X-Scope-Token), `expired` ERR10001 or ERR10004 (the
 * authorizer's table). The message is a fixed reason for the log; it never holds any part of
 * the token.
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

/**
 * Every refusal jose makes of a token, by its error code, and the reason it is logged with
 * (jose's messages are not shown: one reason per kind of defect, stable for log searches). All
 * are invalid tokens: expiry is checked by `claims.ts`, before jose verifies the signature.
 */
const JOSE_REFUSALS: Record<string, string> = {
  ERR_JWS_INVALID: 'token is not a compact JWS with a JSON header',
  ERR_JWT_INVALID: 'payload is not a JSON object',
  ERR_JOSE_NOT_SUPPORTED: 'crit header parameters are not supported',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'signature does not verify',
};

/**
 * A failure of jose's verification as a TokenError (an alg outside `algorithms` is refused
 * naming the list); anything else (ERR20005 of the key store, a TokenError of ours, a defect)
 * unchanged.
 */
export function refusalOf(err: unknown, algorithms: readonly string[]): unknown {
  if (!(err instanceof errors.JOSEError)) return err;
  if (err.code === 'ERR_JOSE_ALG_NOT_ALLOWED') {
    return invalidToken(`alg is not ${algorithms.join(', ')}`);
  }
  return invalidToken(JOSE_REFUSALS[err.code] ?? 'token is not a valid JWS');
}
