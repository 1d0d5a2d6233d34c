import { DEFAULT_ALGORITHMS, verifySignature, type Algorithm } from './algorithms';
import { checkClaims, type ClaimChecks } from './claim-checks';
import { checkTimes, stringClaim } from './claims';
import type { Clock } from './clock';
import { decodeJwt, MAX_TOKEN_LENGTH, type JwtClaims } from './jwt-decode';
import type { KeyStore } from './key-store';
import type { VerificationKey } from './public-key';
import { tokenScopes } from './scopes';
import type { TokenCache } from './token-cache';
import { invalidToken } from './token-error';

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
}

export interface JwtVerifierOptions {
  keys: KeyStore;
  clockSkewInSeconds: number;
  now: Clock;
  /** Verified tokens; absent when `enableJwtCache` is false. */
  cache?: TokenCache<VerifiedToken>;
  maxTokenLength?: number;
  /** security.yml `jwt.algorithms` (default RS256 only). */
  algorithms?: readonly Algorithm[];
  /** Audience and issuer checks, when configured. */
  claims?: ClaimChecks;
}

export type JwtVerifier = (token: string) => Promise<VerifiedToken>;

/**
 * One token: a cached token has only its expiry checked, while the key that verified it is
 * still current (a retired key takes its cached tokens with it); any other is decoded, its
 * `exp`/`nbf`, `iss` and `aud` checked, its key found by `kid` and its signature verified with
 * an algorithm both the token's header and the key allow. A fetched key that fails is fetched
 * again once (a provider that reused a kid). Throws a TokenError (invalid / expired) or ERR20005.
 */
export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  const { keys, clockSkewInSeconds: skew, now, cache } = options;
  const maxLength = options.maxTokenLength ?? MAX_TOKEN_LENGTH;
  const algorithms = options.algorithms ?? DEFAULT_ALGORITHMS;

  return async (token) => {
    const nowSeconds = now() / 1000;
    const cached = cache?.get(token, nowSeconds);
    if (cached && keys.current(cached.kid) === cached.key) return cached;

    const { header, claims, signingInput, signature } = decodeJwt(token, maxLength, algorithms);
    const exp = checkTimes(claims, nowSeconds, skew);
    checkClaims(claims, options.claims);
    const input = Buffer.from(signingInput);
    const verifies = (k: VerificationKey) =>
      k.algorithms.includes(header.alg) && verifySignature(header.alg, k.key, input, signature);
    let key = keys.current(header.kid) ?? (await keys.resolve(header.kid));
    if (!verifies(key)) {
      const fresh = await keys.refetch(header.kid, key);
      if (!fresh || !verifies(fresh)) {
        const fits = (fresh ?? key).algorithms.includes(header.alg);
        throw invalidToken(
          fits ? 'signature does not verify' : 'alg does not fit the key of the kid',
        );
      }
      key = fresh;
    }
    const verified: VerifiedToken = {
      clientId: stringClaim(claims, 'client_id'),
      userId: stringClaim(claims, 'user_id'),
      scopes: tokenScopes(claims),
      claims,
      exp,
      kid: header.kid,
      key,
    };
    cache?.set(token, verified, now() / 1000);
    return verified;
  };
}
