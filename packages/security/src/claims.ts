import { invalidToken, TokenError } from './token-error';

export type JwtClaims = Record<string, unknown>;

/** client.yml `oauth.key.audience` (light-4j's) and `oauth.key.issuer` (ours), when set. */
export interface ClaimChecks {
  audience?: readonly string[];
  issuer?: readonly string[];
}

/** light-4j's rule: expired when `now - skew >= exp` (seconds). */
export function isExpired(exp: number, nowSeconds: number, skewSeconds: number): boolean {
  return nowSeconds - skewSeconds >= exp;
}

/**
 * The registered claims, checked before the key is looked up (light-4j's order: an expired token
 * is ERR10001 whatever its kid or signature, and costs no key server look-up): `exp` required and
 * numeric, not expired; `nbf` numeric and not after now + skew; `iss` and `aud` when configured.
 * Returns `exp`.
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

/** Claim `scope` as a list or a space-separated string, else `scp` in either form, else none. */
export function tokenScopes(claims: JwtClaims): string[] {
  return asScopes(claims.scope) ?? asScopes(claims.scp) ?? [];
}

function asScopes(value: unknown): string[] | undefined {
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string');
  return undefined;
}

/**
 * What a `cnf` claim (RFC 7800) binds a token to (`x5t#S256`: RFC 8705, `jkt`: RFC 9449);
 * `problem` when it names something this service cannot check (never accepted).
 */
export interface Binding {
  x5t?: string;
  jkt?: string;
  problem?: string;
}

/** The binding of a token's claims (a JWT's or an introspection answer's); undefined without `cnf`. */
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

/** What a verified token (a JWT, or an active introspection answer) says of its caller. */
export interface VerifiedCaller {
  clientId?: string;
  userId?: string;
  scopes: string[];
  claims: JwtClaims;
  /** Proven by every request, cached or not (`token-binding.ts`). */
  binding?: Binding;
  introspected?: true;
}

/** The caller of verified claims: `client_id`, light-oauth2's `user_id`, the scopes, the binding. */
export function callerOf(claims: JwtClaims): VerifiedCaller {
  const { client_id: clientId, user_id: userId } = claims;
  return {
    clientId: typeof clientId === 'string' ? clientId : undefined,
    userId: typeof userId === 'string' ? userId : undefined,
    scopes: tokenScopes(claims),
    claims,
    binding: bindingOf(claims),
  };
}
