import { compactVerify, decodeJwt, type CompactVerifyGetKey, type JWSHeaderParameters } from 'jose';
import { DEFAULT_ALGORITHMS, type Algorithm } from './algorithms.js';
import {
  callerOf,
  checkClaims,
  isExpired,
  type ClaimChecks,
  type JwtClaims,
  type VerifiedCaller,
} from './claims.js';
import { BoundedMap } from './bounded-map.js';
import { isCanonicalCompactJws } from './compact-jws.js';
import type { Clock } from './key-source.js';
import type { KeyStore } from './key-store.js';
import type { VerificationKey } from './public-key.js';
import { invalidToken, refusalOf, TokenError } from './token-error.js';

export interface VerifiedToken extends VerifiedCaller {
  exp: number;
  /** A cached token is served only while this key is current in its store. */
  kid: string;
  key: VerificationKey;
  keys: KeyStore;
}

/** security.yml `jwt.issuers`: the keys and claim checks of a token's `iss`; undefined: refused. */
export type IssuerKeys = (iss: unknown) => { keys: KeyStore; claims: ClaimChecks } | undefined;

export const MAX_TOKEN_LENGTH = 8192;

// No slash, no `..`: nothing a URL or a path could misread.
const KID = /^(?!\.+$)[A-Za-z0-9._-]{1,128}$/;

// RFC 9068 section 4, the media type's case and `application/` prefix optional (RFC 8725 3.11).
const AT_JWT = /^(application\/)?at\+jwt$/i;
const MISFIT = 'alg does not fit the key of the kid';
const BAD_SIGNATURE = 'signature does not verify';

// Keyed by the last characters (the random signature), compared whole: a map keyed by the whole
// token would hash all of it on every look-up.
const KEY_LENGTH = 64;
const cacheKey = (token: string) =>
  token.length > KEY_LENGTH ? token.slice(token.length - KEY_LENGTH) : token;

/**
 * A fetched key that fails is fetched again once (a reused kid). Throws a TokenError or ERR20005.
 * With `IssuerKeys`, an `iss` it does not know is refused before any key is looked up.
 */
export function createJwtVerifier(options: {
  keys: KeyStore | IssuerKeys;
  clockSkewInSeconds: number;
  now: Clock;
  cacheMaxEntries?: number;
  algorithms?: readonly Algorithm[];
  claims?: ClaimChecks;
}): (token: string) => Promise<VerifiedToken> {
  const { keys, clockSkewInSeconds: skew, now, cacheMaxEntries } = options;
  const issuerKeys: IssuerKeys =
    typeof keys === 'function' ? keys : () => ({ keys, claims: options.claims ?? {} });
  const algorithms = options.algorithms ?? DEFAULT_ALGORITHMS;
  const joseOptions = { algorithms: [...algorithms] };
  const cache = cacheMaxEntries
    ? new BoundedMap<string, { token: string; verified: VerifiedToken }>(cacheMaxEntries)
    : undefined;

  return async (token) => {
    const nowSeconds = now() / 1000;
    const hit = cache?.get(cacheKey(token));
    if (hit !== undefined && hit.token === token) {
      const { verified } = hit;
      const { exp, kid, key, keys: store } = verified;
      if (!isExpired(exp, nowSeconds, skew) && store.current(kid) === key) return verified;
    }
    if (token.length > MAX_TOKEN_LENGTH) {
      throw invalidToken(`token longer than ${MAX_TOKEN_LENGTH} characters`);
    }
    if (!isCanonicalCompactJws(token)) {
      throw invalidToken('token is not three segments of unpadded base64url');
    }

    let kid = '';
    let claims: JwtClaims = {};
    let exp = 0;
    let key: VerificationKey | undefined;
    let store: KeyStore | undefined;
    const fitting = (k: VerificationKey, { alg }: JWSHeaderParameters) => {
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
      if (options.claims?.strict && !AT_JWT.test(header.typ ?? '')) {
        throw invalidToken('typ is not at+jwt (jwt.strict)');
      }
      claims = decodeJwt(token);
      const issuer = issuerKeys(claims.iss);
      if (!issuer) throw invalidToken('iss is not an accepted issuer');
      store = issuer.keys;
      exp = checkClaims(claims, nowSeconds, skew, issuer.claims);
      return fitting(await store.resolve(kid), header);
    };
    const verifyWith = (getKey: CompactVerifyGetKey) =>
      compactVerify(token, getKey, joseOptions).catch((err: unknown) => {
        throw refusalOf(err, algorithms);
      });
    try {
      await verifyWith(resolveKey);
    } catch (refusal) {
      const keyFailed =
        refusal instanceof TokenError && [MISFIT, BAD_SIGNATURE].includes(refusal.message);
      const fresh = keyFailed ? await store!.refetch(kid, key!) : undefined;
      if (!fresh) throw refusal;
      await verifyWith((header) => fitting(fresh, header));
    }
    const verified: VerifiedToken = { ...callerOf(claims), exp, kid, key: key!, keys: store! };
    cache?.set(cacheKey(token), { token, verified });
    return verified;
  };
}
