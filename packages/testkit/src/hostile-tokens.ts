import crypto from 'node:crypto';
import type { SigningKey } from './signing-key.js';
import { b64url, signWith, standardClaims, type Claims } from './token.js';

export interface HostileToken {
  name: string;
  token: string;
}

/** The attacker's own RSA key (made once): it signs the tokens whose header names it. */
let attacker: crypto.KeyPairKeyObjectResult | undefined;

/**
 * Tokens an attacker sends, each to be refused with 401 ERR10000 (never 5xx, never accepted).
 * `key` is a key the service trusts, so that only the named defect makes a token bad.
 */
export function hostileTokens(
  key: SigningKey,
  options: { now?: number; scope?: string[]; skewSeconds?: number } = {},
): HostileToken[] {
  const now = options.now ?? Date.now();
  const skew = options.skewSeconds ?? 60;
  const good = standardClaims({ now, scope: options.scope });
  const header = { alg: 'RS256', typ: 'JWT', kid: key.kid };
  const signed = (h: Claims, p: Claims | string) => signWith(key.privateKey, h, p);
  const hs256 = (secret: string) => {
    const input = `${b64url({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${b64url(good)}`;
    const mac = crypto.createHmac('sha256', secret).update(input).digest('base64url');
    return `${input}.${mac}`;
  };
  attacker ??= crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const byAttacker = (h: Claims) => signWith(attacker!.privateKey, { ...header, ...h }, good);
  const valid = signed(header, good);
  const [h, p, s] = valid.split('.');
  // Another spelling of the same bytes, signed as sent: the signature verifies over that text.
  const signedText = (input: string) =>
    `${input}.${crypto.sign('sha256', Buffer.from(input), key.privateKey).toString('base64url')}`;
  const padded = (segment: string) => segment + '='.repeat((4 - (segment.length % 4)) % 4);
  // a header whose base64url takes padding, whatever the kid's length
  const paddable = ['y', 'yy']
    .map((x) => b64url({ ...header, x }))
    .find((segment) => segment.length % 4 !== 0)!;
  // '>>>???' is 'Pj4+Pz8/' in standard base64: a payload that differs from its base64url
  const standardPayload = Buffer.from(JSON.stringify({ ...good, note: '>>>???' })).toString(
    'base64',
  );
  const sextets = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  // An RSA signature of 256 bytes is 342 characters: the last one holds 4 bits past the bytes
  const lastBitsSet = s.slice(0, -1) + sextets[sextets.indexOf(s.at(-1)!) | 0b1111];
  const withoutExp = { ...good };
  delete withoutExp.exp;
  return [
    { name: 'alg none, no signature', token: `${b64url({ alg: 'none', typ: 'JWT' })}.${p}.` },
    { name: 'alg none with kid', token: `${b64url({ ...header, alg: 'none' })}.${p}.${s}` },
    { name: 'HS256 with the certificate as secret', token: hs256(key.certificatePem) },
    {
      name: 'HS256 with the public key as secret',
      token: hs256(key.publicKey.export({ type: 'spki', format: 'pem' }).toString()),
    },
    { name: 'path-like kid', token: signed({ ...header, kid: '../../../../etc/passwd' }, good) },
    { name: 'dot-dot kid', token: signed({ ...header, kid: '..' }, good) },
    { name: 'url-like kid', token: signed({ ...header, kid: 'https://evil.example/k' }, good) },
    { name: 'no kid', token: signed({ alg: 'RS256', typ: 'JWT' }, good) },
    // a header naming where the key is, signed by the attacker: only the kid chooses a key
    {
      name: 'jwk header with the signer key',
      token: byAttacker({ jwk: attacker.publicKey.export({ format: 'jwk' }) }),
    },
    { name: 'jku header', token: byAttacker({ jku: 'https://evil.example/jwks.json' }) },
    { name: 'x5u header', token: byAttacker({ x5u: 'https://evil.example/key.pem' }) },
    {
      name: 'x5c header',
      token: byAttacker({
        x5c: [attacker.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')],
      }),
    },
    {
      name: '100 KB token',
      // base64url grows by 4/3: a payload of 75 KB makes a token of just over 100 KB
      token: signed(header, { ...good, pad: 'x'.repeat(75 * 1024) }),
    },
    { name: 'header segment not base64url', token: `${h}*.${p}.${s}` },
    { name: 'payload segment not base64url', token: `${h}.${p}%.${s}` },
    { name: 'signature segment not base64url', token: `${h}.${p}.${s}+/=` },
    {
      name: 'header with = padding, signed as sent',
      token: signedText(`${padded(paddable)}.${p}`),
    },
    {
      name: 'payload in standard base64, signed as sent',
      token: signedText(`${h}.${standardPayload.replace(/=+$/, '')}`),
    },
    { name: 'signature with = padding', token: `${h}.${p}.${padded(s)}` },
    {
      name: 'signature in standard base64',
      token: `${h}.${p}.${Buffer.from(s, 'base64url').toString('base64')}`,
    },
    { name: 'signature with bits set past its last byte', token: `${h}.${p}.${lastBitsSet}` },
    { name: 'two segments', token: `${h}.${p}` },
    { name: 'four segments', token: `${valid}.${s}` },
    { name: 'payload not JSON', token: signed(header, 'not json at all') },
    { name: 'payload a JSON array', token: `${h}.${b64url('[1,2,3]')}.${s}` },
    { name: 'payload a JSON string', token: signed(header, JSON.stringify('a string')) },
    { name: 'payload null', token: signed(header, 'null') },
    { name: 'header not JSON', token: `${b64url('{alg:RS256')}.${p}.${s}` },
    { name: 'exp missing', token: signed(header, withoutExp) },
    { name: 'exp a string', token: signed(header, { ...good, exp: String(good.exp) }) },
    { name: 'exp null', token: signed(header, { ...good, exp: null }) },
    { name: 'nbf not a number', token: signed(header, { ...good, nbf: 'soon' }) },
    {
      name: 'nbf in the future beyond the skew',
      token: signed(header, { ...good, nbf: Math.floor(now / 1000) + skew + 30 }),
    },
    { name: 'crit header', token: signed({ ...header, crit: ['exp'] }, good) },
    {
      name: 'signature of another token',
      token: `${h}.${b64url({ ...good, scope: ['admin'] })}.${s}`,
    },
    { name: 'signature truncated', token: `${h}.${p}.${s.slice(0, 20)}` },
  ];
}
