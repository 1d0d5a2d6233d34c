import crypto, { type KeyObject } from 'node:crypto';
import type { KeyType, SigningAlgorithm } from './signing-key.js';
import { signWith, type Claims } from './token.js';

// Sender-constrained tokens for tests: a DPoP key pair, DPoP proofs (RFC 9449), and the `cnf`
// claims of tokens bound to a client certificate (RFC 8705) or a DPoP key. The thumbprints are
// computed here by hand, from the RFCs, so that a test compares the service's jose-computed
// values with an independent computation.

/** A DPoP key pair: its private key, its public JWK and RFC 7638 thumbprint (`cnf.jkt`). */
export interface DpopKey {
  alg: SigningAlgorithm;
  privateKey: KeyObject;
  /** The public JWK a proof carries in its header. */
  jwk: Record<string, string>;
  /** RFC 7638 SHA-256 thumbprint of `jwk`, base64url: a bound token's `cnf.jkt`. */
  thumbprint: string;
}

/** A new DPoP key: EC P-256 (ES256) unless told; RSA signs PS256 unless told RS256. */
export function createDpopKey(
  type: KeyType = 'ec',
  options: { alg?: SigningAlgorithm; modulusLength?: number } = {},
): DpopKey {
  const { privateKey, publicKey } =
    type === 'rsa'
      ? crypto.generateKeyPairSync('rsa', { modulusLength: options.modulusLength ?? 2048 })
      : type === 'ec'
        ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : crypto.generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  const alg = options.alg ?? (type === 'rsa' ? 'PS256' : type === 'ec' ? 'ES256' : 'EdDSA');
  return { alg, privateKey, jwk, thumbprint: jwkThumbprint(jwk) };
}

/** The members of each key type that RFC 7638 hashes, in lexicographic order. */
const THUMBPRINT_MEMBERS: Record<string, string[]> = {
  EC: ['crv', 'kty', 'x', 'y'],
  RSA: ['e', 'kty', 'n'],
  OKP: ['crv', 'kty', 'x'],
};

/** RFC 7638 SHA-256 JWK thumbprint, base64url: the required members in order, no spaces. */
export function jwkThumbprint(jwk: Record<string, string>): string {
  const members = THUMBPRINT_MEMBERS[jwk.kty];
  const json = `{${members.map((m) => `${JSON.stringify(m)}:${JSON.stringify(jwk[m])}`).join(',')}}`;
  return crypto.createHash('sha256').update(json).digest('base64url');
}

/** RFC 9449 `ath`: base64url of the SHA-256 of the access token. */
export function accessTokenHash(accessToken: string): string {
  return crypto.createHash('sha256').update(accessToken).digest('base64url');
}

export interface ProofOptions {
  /** The request method (`htm`). */
  htm: string;
  /** The request URI without query and fragment (`htu`). */
  htu: string;
  /** The access token the proof goes with (`ath`); absent: no `ath`. */
  accessToken?: string;
  /** Milliseconds since the epoch of `iat` (default Date.now()). */
  now?: number;
  /** Default: a new random UUID. */
  jti?: string;
  /** Header members to add or replace (`typ`, `alg`, `jwk` …); a member set to undefined goes. */
  header?: Claims;
  /** Claims to add or replace; a claim set to undefined goes. */
  claims?: Claims;
  /** The algorithm the signature is made with (default: the header's alg). */
  signingAlg?: SigningAlgorithm;
}

/** A DPoP proof of `key` for one request (RFC 9449 section 4.2), with any member changed. */
export function dpopProof(key: DpopKey, options: ProofOptions): string {
  const header = dropUndefined({ typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk, ...options.header });
  const claims = dropUndefined({
    jti: options.jti ?? crypto.randomUUID(),
    htm: options.htm,
    htu: options.htu,
    iat: Math.floor((options.now ?? Date.now()) / 1000),
    ...(options.accessToken === undefined ? {} : { ath: accessTokenHash(options.accessToken) }),
    ...options.claims,
  });
  return signWith(key.privateKey, header, claims, options.signingAlg ?? header.alg);
}

/** RFC 8705 `x5t#S256` of a PEM (or DER) certificate: base64url of the SHA-256 of its DER. */
export function certificateThumbprint(certificate: string | Buffer): string {
  const der = new crypto.X509Certificate(certificate).raw;
  return crypto.createHash('sha256').update(der).digest('base64url');
}

/** The `cnf` claim of a token bound to a client certificate (RFC 8705 section 3.1). */
export function certificateBound(thumbprint: string): { cnf: Record<string, string> } {
  return { cnf: { 'x5t#S256': thumbprint } };
}

/** The `cnf` claim of a token bound to a DPoP key (RFC 9449 section 6.1). */
export function dpopBound(key: DpopKey | string): { cnf: Record<string, string> } {
  return { cnf: { jkt: typeof key === 'string' ? key : key.thumbprint } };
}

function dropUndefined(record: Claims): Claims {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
