import type { StatusCode } from '@chain/errors';
import { errors } from 'jose';

/**
 * Why a token was refused, before it is known which header it came from (REFUSAL_CODES). The
 * message is a fixed reason for the log; it never holds any part of
 * the token.
 */
export class TokenError extends Error {
  override readonly name = 'TokenError';

  constructor(
    readonly kind: 'invalid' | 'expired' | 'inactive',
    reason: string,
  ) {
    super(reason);
  }
}

export const invalidToken = (reason: string) => new TokenError('invalid', reason);

/**
 * The catalogue code of a refusal, by the header the token came in. `inactive`: introspection
 * said so (light-4j's ERR10081 for `Authorization`; an X-Scope-Token keeps its own code, as its
 * invalid and expired JWTs do).
 */
export const REFUSAL_CODES: Record<'auth' | 'scope', Record<TokenError['kind'], StatusCode>> = {
  auth: { invalid: 'ERR10000', expired: 'ERR10001', inactive: 'ERR10081' },
  scope: { invalid: 'ERR10003', expired: 'ERR10004', inactive: 'ERR10003' },
};

/**
 * jose's refusals of a token by error code, each with the reason it is logged with (one per kind
 * of defect, stable for log searches). All are invalid tokens: the expiry is ours (`claims.ts`).
 */
const JOSE_REFUSALS: Record<string, string> = {
  ERR_JWS_INVALID: 'token is not a compact JWS with a JSON header',
  ERR_JWT_INVALID: 'payload is not a JSON object',
  ERR_JOSE_NOT_SUPPORTED: 'crit header parameters are not supported',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'signature does not verify',
};

/** A jose error as a TokenError (an alg it does not allow names the list); anything else unchanged. */
export function refusalOf(err: unknown, algorithms: readonly string[]): unknown {
  if (!(err instanceof errors.JOSEError)) return err;
  const reason =
    err.code === 'ERR_JOSE_ALG_NOT_ALLOWED'
      ? `alg is not ${algorithms.join(', ')}`
      : (JOSE_REFUSALS[err.code] ?? 'token is not a valid JWS');
  return invalidToken(reason);
}
