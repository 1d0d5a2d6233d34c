import crypto from 'node:crypto';
import { createDpopKey, dpopProof, signWith, b64url, type DpopKey } from '@chain/testkit';

/** The request every case is a proof for. */
export const HTU = 'https://api-b:7442/v1/data';
export const METHOD = 'GET';

/** One DPoP key of each type the default `dpop.algorithms` accepts, made once. */
export const KEYS = {
  ec: createDpopKey('ec'),
  ed25519: createDpopKey('ed25519'),
  rsaPss: createDpopKey('rsa'),
  rsa: createDpopKey('rsa', { alg: 'RS256' }),
};
const other = createDpopKey('ec');
const shortRsa = createDpopKey('rsa', { modulusLength: 1024 });

export interface ProofCase {
  /** What is wrong, as a test name: the item of RFC 9449 section 4.3 it breaks. */
  name: string;
  /** The DPoP header for an access token, at `now` (ms). */
  header: (accessToken: string, now: number) => string | string[] | undefined;
  /** The fixed reason of the refusal, as logged. */
  reason: string;
}

const proof = (
  accessToken: string,
  now: number,
  options: Partial<Parameters<typeof dpopProof>[1]> = {},
  key: DpopKey = KEYS.ec,
) => dpopProof(key, { htm: METHOD, htu: HTU, accessToken, now, ...options });

/** A proof with a payload that is not a JSON object, signed by the key of its jwk. */
const withPayload = (payload: string) =>
  signWith(KEYS.ec.privateKey, { typ: 'dpop+jwt', alg: 'ES256', jwk: KEYS.ec.jwk }, payload);

/**
 * A proof failing each check of RFC 9449 section 4.3 once (the nonce, item 10, is not used
 * here), with the reason the service logs. Every one is 401 ERR20013.
 */
export const PROOF_CASES: ProofCase[] = [
  { name: '1: no DPoP header', header: () => undefined, reason: 'no DPoP proof header' },
  {
    name: '1: two DPoP headers (as Node joins them)',
    header: (t, now) => `${proof(t, now)}, ${proof(t, now)}`,
    reason: 'more than one DPoP proof header',
  },
  {
    name: '1: two DPoP headers (as a list)',
    header: (t, now) => [proof(t, now), proof(t, now)],
    reason: 'more than one DPoP proof header',
  },
  {
    name: '2: not a token68 value',
    header: (t, now) => `${proof(t, now)} x`,
    reason: 'proof is not a single JWT',
  },
  {
    name: '2: not a compact JWS',
    header: () => 'abc.def',
    reason: 'proof is not three segments of unpadded base64url',
  },
  {
    name: '2: three segments, not a JWS with a JSON header',
    header: () => 'abcd.defg.AA',
    reason: 'proof is not a compact JWS with a JSON header',
  },
  {
    name: '2: a signature with = padding',
    header: (t, now) => `${proof(t, now)}==`,
    reason: 'proof is not three segments of unpadded base64url',
  },
  {
    name: '2: a header with = padding, signed as sent',
    header: (t, now) => {
      const [h, p] = proof(t, now).split('.');
      const input = `${h}${'='.repeat((4 - (h.length % 4)) % 4) || '='}.${p}`;
      const key = { key: KEYS.ec.privateKey, dsaEncoding: 'ieee-p1363' } as const;
      return `${input}.${crypto.sign('sha256', Buffer.from(input), key).toString('base64url')}`;
    },
    reason: 'proof is not a single JWT',
  },
  {
    name: '2: longer than 8192 characters',
    header: () => 'a'.repeat(8193),
    reason: 'proof longer than 8192 characters',
  },
  {
    name: '2: a payload that is not a JSON object',
    header: () => withPayload('[1]'),
    reason: 'payload is not a JSON object',
  },
  ...['jti', 'htm', 'htu', 'iat', 'ath'].map((claim) => ({
    name: `3: no ${claim}`,
    header: (t: string, now: number) => proof(t, now, { claims: { [claim]: undefined } }),
    reason: `${claim} is missing`,
  })),
  {
    name: '3: a jti that is not a string',
    header: (t, now) => proof(t, now, { claims: { jti: 7 } }),
    reason: 'jti is not a string of 1 to 128 characters',
  },
  {
    name: '3: a jti longer than 128 characters',
    header: (t, now) => proof(t, now, { jti: 'j'.repeat(129) }),
    reason: 'jti is not a string of 1 to 128 characters',
  },
  {
    name: '3: an iat that is not a number',
    header: (t, now) => proof(t, now, { claims: { iat: '1700000000' } }),
    reason: 'iat is not valid',
  },
  {
    name: '4: typ JWT',
    header: (t, now) => proof(t, now, { header: { typ: 'JWT' } }),
    reason: 'typ is not dpop+jwt',
  },
  {
    name: '4: no typ',
    header: (t, now) => proof(t, now, { header: { typ: undefined } }),
    reason: 'typ is not dpop+jwt',
  },
  {
    name: '5: alg none',
    header: (t, now) =>
      `${b64url({ typ: 'dpop+jwt', alg: 'none', jwk: KEYS.ec.jwk })}.${b64url({ jti: 'j', htm: METHOD, htu: HTU, iat: Math.floor(now / 1000), ath: 'x' })}.`,
    reason: 'alg is not ES256, EdDSA, PS256, RS256',
  },
  {
    name: '5: alg HS256 (a MAC)',
    header: (t, now) => proof(t, now, { header: { alg: 'HS256' }, signingAlg: 'ES256' }),
    reason: 'alg is not ES256, EdDSA, PS256, RS256',
  },
  {
    name: '6: signed by another key than its jwk',
    header: (t, now) => proof(t, now, { header: { jwk: other.jwk } }),
    reason: 'signature does not verify with the jwk of the proof',
  },
  {
    name: '6: no jwk',
    header: (t, now) => proof(t, now, { header: { jwk: undefined } }),
    reason: 'jwk header is missing or not an object',
  },
  {
    name: '6: a jwk that is not an object',
    header: (t, now) => proof(t, now, { header: { jwk: 'key' } }),
    reason: 'jwk header is missing or not an object',
  },
  {
    name: '6: a jwk that is not a key of its alg (EC key, PS256)',
    header: (t, now) => proof(t, now, { header: { alg: 'PS256' }, signingAlg: 'ES256' }),
    reason: 'jwk is not a public key of the alg',
  },
  {
    name: '6: a jwk that is not a key (an EC point off the curve)',
    header: (t, now) =>
      proof(t, now, { header: { jwk: { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' } } }),
    reason: 'jwk is not a public key of the alg',
  },
  {
    name: '6: a jwk of an unknown key type',
    header: (t, now) => proof(t, now, { header: { jwk: { kty: 'XYZ' } } }),
    reason: 'jwk is not a public key of the alg',
  },
  {
    name: '6: an RSA jwk under 2048 bits',
    header: (t, now) => proof(t, now, {}, shortRsa),
    reason: 'jwk does not fit the alg',
  },
  {
    name: '6: crit header parameters',
    header: (t, now) => proof(t, now, { header: { crit: ['exp'], exp: 1 } }),
    reason: 'crit header parameters are not supported',
  },
  {
    name: '7: a jwk with its private key',
    header: (t, now) =>
      proof(t, now, {
        header: {
          jwk: KEYS.ec.privateKey.export({ format: 'jwk' }),
        },
      }),
    reason: 'jwk holds a private key',
  },
  {
    name: '7: a symmetric jwk',
    header: (t, now) => proof(t, now, { header: { jwk: { kty: 'oct', k: 'c2VjcmV0' } } }),
    reason: 'jwk holds a private key',
  },
  {
    name: '8: htm POST for a GET',
    header: (t, now) => proof(t, now, { htm: 'POST' }),
    reason: 'htm is not the request method',
  },
  {
    name: '8: htm in lower case',
    header: (t, now) => proof(t, now, { htm: 'get' }),
    reason: 'htm is not the request method',
  },
  {
    name: '9: htu of another host',
    header: (t, now) => proof(t, now, { htu: 'https://api-c:7442/v1/data' }),
    reason: 'htu is not the request URI',
  },
  {
    name: '9: htu of another path',
    header: (t, now) => proof(t, now, { htu: 'https://api-b:7442/v1/data/x' }),
    reason: 'htu is not the request URI',
  },
  {
    name: '9: htu of another scheme',
    header: (t, now) => proof(t, now, { htu: 'http://api-b:7442/v1/data' }),
    reason: 'htu is not the request URI',
  },
  {
    name: '9: htu that is not a URL',
    header: (t, now) => proof(t, now, { htu: '/v1/data' }),
    reason: 'htu is not the request URI',
  },
  {
    name: '9: htu that is not a string',
    header: (t, now) => proof(t, now, { htu: 1 as unknown as string }),
    reason: 'htu is not the request URI',
  },
  {
    name: '11: iat 61 seconds ago',
    header: (t, now) => proof(t, now - 61_000),
    reason: 'iat is more than 60 seconds from now',
  },
  {
    name: '11: iat 61 seconds ahead',
    header: (t, now) => proof(t, now + 61_000),
    reason: 'iat is more than 60 seconds from now',
  },
  {
    name: '11: an exp that has passed',
    header: (t, now) => proof(t, now, { claims: { exp: Math.floor(now / 1000) - 1 } }),
    reason: 'proof expired (exp)',
  },
  {
    name: '12: ath of another token',
    header: (t, now) => proof(`${t}x`, now),
    reason: 'ath is not the hash of the access token',
  },
];
