import { invalidToken, TokenError } from './token-error.js';

export type JwtClaims = Record<string, unknown>;

/** client.yml `oauth.key.audience` and `oauth.key.issuer`; security.yml `jwt.strict`, `jwt.maxTokenAgeSeconds`. */
export interface ClaimChecks {
  audience?: readonly string[];
  issuer?: readonly string[];
  /** RFC 9068: `typ` at+jwt (the verifier checks the header) and its claims present. */
  strict?: boolean;
  maxTokenAgeSeconds?: number;
}

const RFC9068_CLAIMS = ['iss', 'sub', 'aud', 'client_id', 'jti'];

/** light-4j's rule: expired when `now - skew >= exp` (seconds). */
export function isExpired(exp: number, nowSeconds: number, skewSeconds: number): boolean {
  return nowSeconds - skewSeconds >= exp;
}

/**
 * Checked before the key is looked up (light-4j's order: an expired token is ERR10001 whatever its
 * kid or signature, and costs no key server look-up). Returns `exp`, or with `maxTokenAgeSeconds`
 * `iat` + the age when sooner: the cache then keeps the token no longer than that.
 */
export function checkClaims(
  claims: JwtClaims,
  nowSeconds: number,
  skewSeconds: number,
  checks: ClaimChecks = {},
): number {
  const { exp: claimed, nbf, iat } = claims;
  if (!isNumber(claimed)) throw invalidToken('exp is missing or not a number');
  let exp = claimed;
  if (nbf !== undefined && !isNumber(nbf)) throw invalidToken('nbf is not a number');
  const { strict, maxTokenAgeSeconds: maxAge } = checks;
  // iat is light-4j's to ignore, unless one of these asks for it.
  if (strict || maxAge !== undefined) {
    if (!isNumber(iat)) throw invalidToken('iat is missing or not a number');
    if (iat - skewSeconds > nowSeconds) throw invalidToken('iat is in the future');
    const missing = strict && RFC9068_CLAIMS.find((name) => claims[name] === undefined);
    if (missing) throw invalidToken(`${missing} is missing (jwt.strict)`);
    if (maxAge !== undefined) exp = Math.min(exp, iat + maxAge);
  }
  if (isExpired(exp, nowSeconds, skewSeconds)) throw new TokenError('expired', 'token expired');
  if (nbf !== undefined && nbf - skewSeconds > nowSeconds) {
    throw invalidToken('token is not valid yet (nbf)');
  }
  const problem = checkAudienceAndIssuer(claims, checks);
  if (problem) throw invalidToken(problem);
  return exp;
}

/** Why `iss` or `aud` is not one of the accepted, or undefined: for JWTs and introspection answers. */
export function checkAudienceAndIssuer(claims: JwtClaims, checks: ClaimChecks): string | undefined {
  const { iss, aud } = claims;
  if (checks.issuer?.length && !(typeof iss === 'string' && checks.issuer.includes(iss))) {
    return 'iss is not an accepted issuer';
  }
  if (checks.audience?.length) {
    const held = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
    if (!held.some((a) => typeof a === 'string' && checks.audience!.includes(a))) {
      return 'aud holds no accepted audience';
    }
  }
  return undefined;
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function asScopes(value: unknown): string[] | undefined {
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string');
  return undefined;
}

/** RFC 7800 `cnf`: `x5t#S256` (RFC 8705), `jkt` (RFC 9449); `problem`: never accepted. */
export interface Binding {
  x5t?: string;
  jkt?: string;
  problem?: string;
}

export function bindingOf(claims: JwtClaims): Binding | undefined {
  const { cnf } = claims;
  if (cnf === undefined) return undefined;
  if (typeof cnf !== 'object' || cnf === null || Array.isArray(cnf)) {
    return { problem: 'cnf is not an object' };
  }
  const members = Object.entries(cnf as Record<string, unknown>);
  if (members.length === 0) return { problem: 'cnf names no confirmation method' };
  const binding: Binding = {};
  for (const [method, value] of members) {
    if (method !== 'x5t#S256' && method !== 'jkt') {
      return { problem: 'cnf names a confirmation method other than x5t#S256 and jkt' };
    }
    if (typeof value !== 'string' || value === '') {
      return { problem: `cnf ${method} is not a non-empty string` };
    }
    if (method === 'jkt') binding.jkt = value;
    else binding.x5t = value;
  }
  return binding;
}

export interface VerifiedCaller {
  clientId?: string;
  userId?: string;
  scopes: string[];
  claims: JwtClaims;
  /** Proven by every request, cached or not. */
  binding?: Binding;
  introspected?: true;
  /** Epoch seconds; an introspection answer may have none. */
  exp?: number;
}

export function callerOf(claims: JwtClaims): VerifiedCaller {
  const { client_id: clientId, user_id: userId } = claims;
  return {
    clientId: typeof clientId === 'string' ? clientId : undefined,
    userId: typeof userId === 'string' ? userId : undefined,
    scopes: asScopes(claims.scope) ?? asScopes(claims.scp) ?? [],
    claims,
    binding: bindingOf(claims),
  };
}
