import { compactVerify, decodeJwt, type CompactVerifyGetKey, type JWSHeaderParameters } from 'jose';
import { DEFAULT_ALGORITHMS, type Algorithm } from './algorithms';
import { checkClaims, type ClaimChecks, type JwtClaims } from './claims';
import type { Clock } from './clock';
import type { KeyStore } from './key-store';
import type { VerificationKey } from './public-key';
import { tokenScopes } from './scopes';
import { bindingOf, type Binding } from './token-binding';
import type { TokenCache } from './token-cache';
import { invalidToken, refusalOf, TokenError } from './token-error';

/** What a verified token tells: the claims light-4j passes on, and the whole claim set. */
export interface VerifiedToken {
  clientId?: string;
  userId?: string;
  scopes: string[];
  claims: JwtClaims;
  exp: number;
  /** The kid and the key that verified it: a cached token is served only while that key is. */
  kid: string;
  key: VerificationKey;
  /**
   * What its `cnf` binds it to (a certificate, a DPoP key), kept with the cached entry: every
   * request proves it again (`token-binding.ts`). Undefined for a token without `cnf`.
   */
  binding?: Binding;
}

export interface JwtVerifierOptions {
  keys: KeyStore;
  clockSkewInSeconds: number;
  now: Clock;
  /** Verified tokens; absent when `enableJwtCache` is false. */
  cache?: TokenCache<VerifiedToken>;
  /** security.yml `jwt.algorithms` (default RS256 only). */
  algorithms?: readonly Algorithm[];
  /** Audience and issuer checks, when configured. */
  claims?: ClaimChecks;
}

export type JwtVerifier = (token: string) => Promise<VerifiedToken>;

/** Longest token accepted (ours). light-oauth2 tokens are well under 2 KB. */
export const MAX_TOKEN_LENGTH = 8192;

/** A key id that is a plain name: no slash, no `..`, nothing a URL or a path could misread. */
const KID = /^(?!\.+$)[A-Za-z0-9._-]{1,128}$/;

const MISFIT = 'alg does not fit the key of the kid';
const BAD_SIGNATURE = 'signature does not verify';

/**
 * One token. A cached token has only its expiry checked, while the key that verified it is
 * still current (a retired key takes its cached tokens with it). Any other goes to jose's
 * `compactVerify`, which parses it and checks its header (`alg` one of `jwt.algorithms`, `crit`)
 * and, with the key our resolver gives, its signature. The resolver refuses any `crit` and a
 * kid that is not a plain name, checks the claims (`claims.ts`, on the payload jose decodes),
 * then finds the key of the kid and checks the alg fits it. A fetched key that fails is fetched
 * again once (a provider that reused a kid). Throws a TokenError (invalid / expired) or ERR20005.
 */
export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  const { keys, clockSkewInSeconds: skew, now, cache } = options;
  const algorithms = options.algorithms ?? DEFAULT_ALGORITHMS;
  const joseOptions = { algorithms: [...algorithms] };

  /** A TokenError when the key `getKey` gives does not verify the token; anything else thrown. */
  const attempt = async (token: string, getKey: CompactVerifyGetKey) => {
    try {
      await compactVerify(token, getKey, joseOptions);
      return undefined;
    } catch (err) {
      const refusal = refusalOf(err, algorithms);
      const keyFailed =
        refusal instanceof TokenError && [MISFIT, BAD_SIGNATURE].includes(refusal.message);
      if (keyFailed) return refusal as TokenError;
      throw refusal;
    }
  };

  return async (token) => {
    const nowSeconds = now() / 1000;
    const cached = cache?.get(token, nowSeconds);
    if (cached && keys.current(cached.kid) === cached.key) return cached;
    if (token.length > MAX_TOKEN_LENGTH) {
      throw invalidToken(`token longer than ${MAX_TOKEN_LENGTH} characters`);
    }

    let kid = '';
    let alg = '';
    let claims: JwtClaims = {};
    let exp = 0;
    let key: VerificationKey | undefined;
    const fitting = (k: VerificationKey) => {
      key = k;
      if (!k.algorithms.includes(alg as Algorithm)) throw invalidToken(MISFIT);
      return k.key;
    };
    const resolveKey = async (header: JWSHeaderParameters) => {
      if (header.crit !== undefined) throw invalidToken('crit header parameters are not supported');
      if (typeof header.kid !== 'string' || !KID.test(header.kid)) {
        throw invalidToken('kid is missing or is not a plain key id');
      }
      kid = header.kid;
      alg = header.alg!;
      claims = decodeJwt(token);
      exp = checkClaims(claims, nowSeconds, skew, options.claims);
      return fitting(await keys.resolve(kid));
    };
    let refused = await attempt(token, resolveKey);
    if (refused) {
      const fresh = await keys.refetch(kid, key!);
      if (!fresh || (refused = await attempt(token, () => fitting(fresh)))) throw refused;
    }
    const verified: VerifiedToken = {
      clientId: stringClaim(claims, 'client_id'),
      userId: stringClaim(claims, 'user_id'),
      scopes: tokenScopes(claims),
      claims,
      exp,
      kid,
      key: key!,
      binding: bindingOf(claims),
    };
    cache?.set(token, verified, now() / 1000);
    return verified;
  };
}

function stringClaim(claims: JwtClaims, name: string): string | undefined {
  const value = claims[name];
  return typeof value === 'string' ? value : undefined;
}
