import type { StatusCode } from '@chain/errors';
import { errors } from 'jose';

/**
 * Why a token was refused, before it is known which header it came from (REFUSAL_CODES): invalid
 * or expired, `inactive` (introspection said an opaque token is not active), or
 * (`token-binding.ts`) good but not proven by the request: `unbound` (its `cnf` names a
 * certificate or key the request does not prove), `proof` (its DPoP proof is missing or fails a
 * check), `replayed` (its DPoP proof was used before). The message is a fixed reason for the log;
 * it never holds any part of the token.
 */
export class TokenError extends Error {
  override readonly name = 'TokenError';

  constructor(
    readonly kind: 'invalid' | 'expired' | 'inactive' | 'unbound' | 'proof' | 'replayed',
    reason: string,
  ) {
    super(reason);
  }
}

export const invalidToken = (reason: string) => new TokenError('invalid', reason);

/** Which header a token came in: Authorization or X-Scope-Token. */
export type TokenHeader = 'auth' | 'scope';

/**
 * The catalogue code of a refusal, by the header the token came in: the one table of refusal
 * codes, for JWTs and opaque tokens alike. The binding codes are the same for both headers; their
 * description names the header (HEADER_NAMES). `inactive`: introspection said so (light-4j's
 * ERR10081 for Authorization; an X-Scope-Token keeps its own code, as its invalid and expired
 * JWTs do).
 */
export const REFUSAL_CODES: Record<TokenHeader, Record<TokenError['kind'], StatusCode>> = {
  auth: {
    invalid: 'ERR10000',
    expired: 'ERR10001',
    inactive: 'ERR10081',
    unbound: 'ERR20012',
    proof: 'ERR20013',
    replayed: 'ERR20014',
  },
  scope: {
    invalid: 'ERR10003',
    expired: 'ERR10004',
    inactive: 'ERR10003',
    unbound: 'ERR20012',
    proof: 'ERR20013',
    replayed: 'ERR20014',
  },
};

/** The header's name in a description (light-4j's words: `authorization header`). */
export const HEADER_NAMES: Record<TokenHeader, string> = {
  auth: 'authorization',
  scope: 'X-Scope-Token',
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
