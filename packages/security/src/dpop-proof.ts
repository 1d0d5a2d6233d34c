import { createHash } from 'node:crypto';
import {
  calculateJwkThumbprint,
  EmbeddedJWK,
  type CryptoKey,
  errors,
  jwtVerify,
  type FlattenedJWSInput,
  type JWK,
  type JWSHeaderParameters,
} from 'jose';
import { BoundedMap } from './bounded-map.js';
import { isCanonicalCompactJws } from './compact-jws.js';
import type { Clock } from './key-source.js';
import type { SecurityConfig } from './security-config.js';
import { refusalOf, TokenError } from './token-error.js';

const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 128;
const MAX_SEEN_KEYS = 256;

/** RFC 9110 token68: one value, no comma, no space. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
/** RFC 7518 section 6. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

const JOSE_REFUSALS: Record<string, string> = {
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'signature does not verify with the jwk of the proof',
  ERR_JWT_EXPIRED: 'proof expired (exp)',
  ERR_JWT_INVALID: 'payload is not a JSON object',
  ERR_JOSE_NOT_SUPPORTED: 'crit header parameters are not supported',
};
const NOT_A_PROOF = 'proof is not a compact JWS with a JSON header';

const proofError = (reason: string) => new TokenError('proof', reason);

/** RFC 9449 section 4.3 on jose's `jwtVerify`, without a server nonce (step 10). */
export function createDpopProofVerifier(
  dpop: Pick<SecurityConfig['dpop'], 'algorithms' | 'iatWindowSeconds'>,
  now: Clock,
) {
  const window = dpop.iatWindowSeconds;
  const algorithms = [...dpop.algorithms];
  // A client's proofs share one header: its key is imported once (as costly as the signature
  // check). Failures are not kept.
  const seenKeys = new BoundedMap<string, { key: CryptoKey; thumbprint: string }>(MAX_SEEN_KEYS);

  const keyOf = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    const text = token.protected!; // a compact JWS always has its protected header
    const seen = seenKeys.get(text);
    if (seen) return seen;
    const { jwk } = header;
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
      throw proofError('jwk header is missing or not an object');
    }
    if (PRIVATE_MEMBERS.some((member) => member in jwk)) {
      throw proofError('jwk holds a private key');
    }
    let entry;
    try {
      entry = {
        key: await EmbeddedJWK(header, token),
        thumbprint: await calculateJwkThumbprint(jwk as JWK),
      };
    } catch {
      throw proofError('jwk is not a public key of the alg');
    }
    seenKeys.set(text, entry);
    return entry;
  };

  /** Every check but the replay of its `jti`. */
  return async (
    header: string | string[] | undefined,
    target: { method: string; uris: readonly string[]; accessToken: string },
  ) => {
    const proof = singleProof(header);
    const nowMs = now();
    let thumbprint = '';
    const getKey = async (protectedHeader: JWSHeaderParameters, token: FlattenedJWSInput) => {
      const entry = await keyOf(protectedHeader, token);
      thumbprint = entry.thumbprint;
      return entry.key;
    };
    const verified = await jwtVerify(proof, getKey, {
      algorithms,
      typ: 'dpop+jwt',
      requiredClaims: ['jti', 'htm', 'htu', 'iat', 'ath'],
      currentDate: new Date(nowMs),
    }).catch((err: unknown) => {
      throw proofRefusalOf(err, algorithms);
    });
    const { jti, htm, htu, ath } = verified.payload;
    const iat = verified.payload.iat!; // required, and a number: jose checked both
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) {
      throw proofError(`jti is not a string of 1 to ${MAX_JTI_LENGTH} characters`);
    }
    if (htm !== target.method) throw proofError('htm is not the request method');
    const uri = typeof htu === 'string' ? normalizeHtu(htu) : undefined;
    if (uri === undefined || !target.uris.includes(uri)) {
      throw proofError('htu is not the request URI');
    }
    if (Math.abs(nowMs / 1000 - iat) > window) {
      throw proofError(`iat is more than ${window} seconds from now`);
    }
    const hash = createHash('sha256').update(target.accessToken, 'ascii').digest('base64url');
    if (ath !== hash) throw proofError('ath is not the hash of the access token');
    return { thumbprint, jti, iat };
  };
}

function singleProof(header: string | string[] | undefined): string {
  const proof = Array.isArray(header) && header.length === 1 ? header[0] : header;
  if (proof === undefined) throw proofError('no DPoP proof header');
  // Node joins repeated headers with ", "; a token68 has no comma.
  if (typeof proof !== 'string' || proof.includes(',')) {
    throw proofError('more than one DPoP proof header');
  }
  if (proof.length > MAX_PROOF_LENGTH) {
    throw proofError(`proof longer than ${MAX_PROOF_LENGTH} characters`);
  }
  if (!TOKEN68.test(proof)) throw proofError('proof is not a single JWT');
  // One proof, one spelling: its `jti` and its signature bind the text as sent.
  if (!isCanonicalCompactJws(proof)) {
    throw proofError('proof is not three segments of unpadded base64url');
  }
  return proof;
}

function proofRefusalOf(err: unknown, algorithms: readonly string[]): unknown {
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'typ') return proofError('typ is not dpop+jwt');
    return proofError(`${err.claim} is ${err.reason === 'missing' ? 'missing' : 'not valid'}`);
  }
  // jose's TypeError: a key that does not fit the alg (a short RSA key, another curve).
  if (err instanceof TypeError) return proofError('jwk does not fit the alg');
  return refusalOf(err, algorithms, proofError, JOSE_REFUSALS, NOT_A_PROOF);
}

/** Visible ASCII but the backslash. */
const PLAIN = /^[\x21-\x5b\x5d-\x7e]+$/;
/** The authority: after the scheme's `//`, up to the path, query or fragment. */
const AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;

/** RFC 3986 section 2.3: a percent-encoding of one is decoded. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/**
 * RFC 3986 sections 6.2.2 and 6.2.3: WHATWG URL does the scheme, host, default port and dot
 * segments; percent-encodings here.
 */
export function normalizeHtu(value: string): string | undefined {
  // RFC 3986 reads these as another URI, where WHATWG URL would drop or mend what differs: user
  // info (`https://someone@host/`, even empty), no `//`, a backslash, whitespace.
  const authority = PLAIN.test(value) ? AUTHORITY.exec(value)?.[1] : undefined;
  if (authority === undefined || authority.includes('@')) return undefined;
  const url = URL.parse(value);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.host === '') {
    return undefined;
  }
  const path = url.pathname.replace(/%[0-9A-Fa-f]{2}/g, (encoded) => {
    const char = String.fromCharCode(parseInt(encoded.slice(1), 16));
    return UNRESERVED.test(char) ? char : encoded.toUpperCase();
  });
  return `${url.protocol}//${url.host}${path}`;
}
