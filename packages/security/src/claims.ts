import { TokenError, invalidToken } from './token-error';
import type { JwtClaims } from './jwt-decode';

/** light-4j's rule: expired when `now - skew >= exp` (all in seconds). */
export function isExpired(exp: number, nowSeconds: number, skewSeconds: number): boolean {
  return nowSeconds - skewSeconds >= exp;
}

/**
 * The time claims: `exp` required and numeric (else invalid, never a 500), not expired; `nbf`,
 * when present, numeric and not later than now + skew. Returns `exp`.
 */
export function checkTimes(claims: JwtClaims, nowSeconds: number, skewSeconds: number): number {
  const { exp, nbf } = claims;
  if (!isNumber(exp)) throw invalidToken('exp is missing or not a number');
  if (nbf !== undefined && !isNumber(nbf)) throw invalidToken('nbf is not a number');
  if (isExpired(exp, nowSeconds, skewSeconds)) throw new TokenError('expired', 'token expired');
  if (nbf !== undefined && nbf - skewSeconds > nowSeconds) {
    throw invalidToken('token is not valid yet (nbf)');
  }
  return exp;
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** A string claim, or undefined when absent or of another type. */
export function stringClaim(claims: JwtClaims, name: string): string | undefined {
  const value = claims[name];
  return typeof value === 'string' ? value : undefined;
}
