import crypto, { type KeyObject } from 'node:crypto';
import type { SigningKey } from './signing-key.js';

export type Claims = Record<string, unknown>;

export const b64url = (value: string | Buffer | object): string =>
  Buffer.from(
    typeof value === 'string' || Buffer.isBuffer(value) ? value : JSON.stringify(value),
  ).toString('base64url');

export interface ClaimOptions {
  /** Milliseconds since the epoch (default Date.now()). */
  now?: number;
  /** Seconds until `exp` (default 600, light-oauth2's). */
  expiresIn?: number;
  clientId?: string;
  userId?: string;
  scope?: string[] | string;
}

/** `iss` and `aud` of the project's local token server (services/token-server), as the shipped client.yml files check them. */
export const LOCAL_ISSUER = 'https://localhost:6882';
export const LOCAL_AUDIENCE = 'urn:chain:api';

/** The claims light-oauth2 puts in a token, for `now`, issued by the local token server for the chain. */
export function standardClaims(options: ClaimOptions = {}): Claims {
  const iat = Math.floor((options.now ?? Date.now()) / 1000);
  const claims: Claims = {
    iss: LOCAL_ISSUER,
    aud: LOCAL_AUDIENCE,
    exp: iat + (options.expiresIn ?? 600),
    iat,
    nbf: iat - 120,
    jti: crypto.randomUUID(),
    client_id: options.clientId ?? 'test-client',
    scope: options.scope ?? [],
  };
  if (options.userId) claims.user_id = options.userId;
  return claims;
}

/** A token signed by `key` with its algorithm (header kid = key.kid unless `header` says otherwise). */
export function signToken(key: SigningKey, claims: Claims, header: Claims = {}): string {
  return signWith(key.privateKey, { alg: key.alg, typ: 'JWT', kid: key.kid, ...header }, claims);
}

/**
 * A token with any header and payload, signed by a private key with the algorithm of
 * `signingAlg` (default: the header's `alg`, RS256 when it names none the key can do).
 */
export function signWith(
  privateKey: KeyObject,
  header: Claims,
  payload: Claims | string,
  signingAlg: unknown = header.alg,
): string {
  const input = Buffer.from(`${b64url(header)}.${b64url(payload)}`);
  return `${input.toString()}.${sign(signingAlg, privateKey, input).toString('base64url')}`;
}

function sign(alg: unknown, key: KeyObject, input: Buffer): Buffer {
  switch (alg) {
    case 'PS256':
      return crypto.sign('sha256', input, {
        key,
        padding: crypto.constants.RSA_PKCS1_PSS_PADDING,
        saltLength: crypto.constants.RSA_PSS_SALTLEN_DIGEST,
      });
    case 'ES256':
      return crypto.sign('sha256', input, { key, dsaEncoding: 'ieee-p1363' });
    case 'EdDSA':
      return crypto.sign(null, input, key);
    default:
      if (key.asymmetricKeyType === 'ec') {
        return crypto.sign('sha256', input, { key, dsaEncoding: 'ieee-p1363' });
      }
      if (key.asymmetricKeyType === 'ed25519') return crypto.sign(null, input, key);
      return crypto.sign('RSA-SHA256', input, key);
  }
}

/** Shorthand: a token of light-oauth2's claims with the given options, signed by `key`. */
export function mintToken(
  key: SigningKey,
  options: ClaimOptions & { claims?: Claims } = {},
): string {
  return signToken(key, { ...standardClaims(options), ...options.claims });
}

/** The claims of a JWT (not verified). */
export function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}
