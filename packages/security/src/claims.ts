import { invalidToken, TokenError } from './token-error';

export type JwtClaims = Record<string, unknown>;

/**
 * Opt-in checks of who issued a token and for whom (client.yml `oauth.key.audience`, light-4j's
 * key, and `oauth.key.issuer`, ours). A check that is configured needs its claim: a token
 * without `aud` fails an audience check.
 */
export interface ClaimChecks {
  /** The token's `aud` (a string or a list) must hold one of these. */
  audience?: readonly string[];
  /** The token's `iss` must be one of these. */
  issuer?: readonly string[];
}

/** light-4j's rule: expired when `now - skew >= exp` (all in seconds; jose's is the same bound on whole seconds). */
export function isExpired(exp: number, nowSeconds: number, skewSeconds: number): boolean {
  return nowSeconds - skewSeconds >= exp;
}

/**
 * Every registered claim of a token, checked before its key is looked up (light-4j's order: an
 * expired token is ERR10001 whatever its kid or signature, and no token these refuse costs a
 * look-up at the key server): `exp` required and numeric (else invalid, never a 500), not
 * expired; `nbf`, when present, numeric and not later than now + skew; `iss` and `aud` when
 * configured. Returns `exp`.
 */
export function checkClaims(
  claims: JwtClaims,
  nowSeconds: number,
  skewSeconds: number,
  checks: ClaimChecks = {},
): number {
  const { exp, nbf, iss, aud } = claims;
  if (!isNumber(exp)) throw invalidToken('exp is missing or not a number');
  if (nbf !== undefined && !isNumber(nbf)) throw invalidToken('nbf is not a number');
  if (isExpired(exp, nowSeconds, skewSeconds)) throw new TokenError('expired', 'token expired');
  if (nbf !== undefined && nbf - skewSeconds > nowSeconds) {
    throw invalidToken('token is not valid yet (nbf)');
  }
  if (checks.issuer?.length && !(typeof iss === 'string' && checks.issuer.includes(iss))) {
    throw invalidToken('iss is not an accepted issuer');
  }
  if (checks.audience?.length) {
    const held = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
    if (!held.some((a) => typeof a === 'string' && checks.audience!.includes(a))) {
      throw invalidToken('aud holds no accepted audience');
    }
  }
  return exp;
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
