import crypto from 'node:crypto';
import { checkTimes, stringClaim } from './claims';
import type { Clock } from './clock';
import { decodeJwt, MAX_TOKEN_LENGTH, type JwtClaims } from './jwt-decode';
import type { KeyStore } from './key-store';
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
}

export interface JwtVerifierOptions {
  keys: KeyStore;
  clockSkewInSeconds: number;
  now: Clock;
  /** Verified tokens; absent when `enableJwtCache` is false. */
  cache?: TokenCache<VerifiedToken>;
  maxTokenLength?: number;
}

export type JwtVerifier = (token: string) => Promise<VerifiedToken>;

/**
 * README "Security" steps 2 and 3 for one token: a cached token has only its expiry checked;
 * any other is decoded, its `exp`/`nbf` checked, its key found by `kid` and its RS256 signature
 * verified. Throws a TokenError (invalid / expired) or ERR20005 (key server unavailable).
 */
export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  const { keys, clockSkewInSeconds: skew, now, cache } = options;
  const maxLength = options.maxTokenLength ?? MAX_TOKEN_LENGTH;

  return async (token) => {
    const nowSeconds = now() / 1000;
    const cached = cache?.get(token, nowSeconds);
    if (cached) return cached;

    const { header, claims, signingInput, signature } = decodeJwt(token, maxLength);
    const exp = checkTimes(claims, nowSeconds, skew);
    const key = keys.known(header.kid) ?? (await keys.resolve(header.kid));
    if (!crypto.verify('RSA-SHA256', Buffer.from(signingInput), key, signature)) {
      throw invalidToken('signature does not verify');
    }
    const verified: VerifiedToken = {
      clientId: stringClaim(claims, 'client_id'),
      userId: stringClaim(claims, 'user_id'),
      scopes: tokenScopes(claims),
      claims,
      exp,
    };
    cache?.set(token, verified, now() / 1000);
    return verified;
  };
}
