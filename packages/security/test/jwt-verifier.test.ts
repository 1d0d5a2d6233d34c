import type { Mock } from 'vitest';
import crypto from 'node:crypto';
import * as jose from 'jose';
import {
  b64url,
  createSigningKey,
  hostileTokens,
  mintToken,
  signToken,
  signWith,
  standardClaims,
} from '@chain/testkit';
import { createJwtVerifier, MAX_TOKEN_LENGTH } from '../src/jwt-verifier.js';
import { KeyStore } from '../src/key-store.js';
import { verificationKey } from '../src/public-key.js';
import { StatusError } from '@chain/errors';
import { TokenError } from '../src/token-error.js';
import { keyMap, manualClock } from './helpers.js';

// jose's compactVerify, counted: the signature is checked by it and nowhere else.
vi.mock('jose', async (original) => (await import('./counted-jose.js')).countedJose(original));
const compactVerify = jose.compactVerify as Mock;

const primary = createSigningKey('100');
const secondary = createSigningKey('101');
const stranger = createSigningKey('100');
const T0 = 1_700_000_000_000;

function setup(options: { cache?: boolean; resolver?: () => Promise<string | undefined> } = {}) {
  const clock = manualClock(T0);
  const keys = new KeyStore(keyMap([primary, secondary]), {
    now: clock.now,
    source: options.resolver ? { kind: 'kid', fetch: options.resolver } : undefined,
  });
  const cacheMaxEntries = options.cache ? 10 : 0;
  const verify = createJwtVerifier({
    keys,
    clockSkewInSeconds: 60,
    now: clock.now,
    cacheMaxEntries,
  });
  return { clock, verify };
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'verified';
  } catch (err) {
    if (err instanceof TokenError) return `${err.code}: ${err.message}`;
    if (err instanceof StatusError) return err.code;
    throw err;
  }
}

describe('createJwtVerifier', () => {
  it('verifies a token of the primary key and returns its claims', async () => {
    const { verify } = setup();
    const token = mintToken(primary, {
      now: T0,
      clientId: 'c1',
      userId: 'u1',
      scope: 'a b',
    });
    const verified = await verify(token);
    expect(verified).toMatchObject({ clientId: 'c1', userId: 'u1', scopes: ['a', 'b'] });
    expect(verified.exp).toBe(T0 / 1000 + 600);
  });

  it('verifies a token of kid 101 with the secondary certificate', async () => {
    const { verify } = setup();
    expect(await outcome(verify(mintToken(secondary, { now: T0 })))).toBe('verified');
  });

  it('refuses a token signed by a key that is not the one of its kid', async () => {
    const { verify } = setup();
    expect(await outcome(verify(mintToken(stranger, { now: T0 })))).toBe(
      'invalid: signature does not verify',
    );
    // kid 101 but signed with the primary key
    expect(
      await outcome(verify(signToken(primary, standardClaims({ now: T0 }), { kid: '101' }))),
    ).toBe('invalid: signature does not verify');
  });

  it('is valid until exp + skew - 1 and expired from exp + skew (1 s steps)', async () => {
    const { verify, clock } = setup();
    const token = mintToken(primary, { now: T0, expiresIn: 600 });
    const exp = T0 + 600_000;
    clock.set(exp + 59_000);
    expect(await outcome(verify(token))).toBe('verified');
    clock.set(exp + 60_000);
    expect(await outcome(verify(token))).toBe('expired: token expired');
    clock.set(exp + 61_000);
    expect(await outcome(verify(token))).toBe('expired: token expired');
  });

  it('reports unknown kids without a key server as invalid', async () => {
    const { verify } = setup();
    const key = createSigningKey('300');
    expect(await outcome(verify(mintToken(key, { now: T0 })))).toBe('invalid: unknown kid');
  });

  it('passes ERR20005 of the key store on', async () => {
    const { verify } = setup({ resolver: () => Promise.reject(new Error('down')) });
    expect(await outcome(verify(mintToken(createSigningKey('300'), { now: T0 })))).toBe('ERR20005');
  });

  describe('with the cache', () => {
    it('skips the signature check of a cached token and re-checks only its expiry', async () => {
      const { verify, clock } = setup({ cache: true });
      const token = mintToken(primary, { now: T0, expiresIn: 600 });
      compactVerify.mockClear();
      await verify(token);
      await verify(token);
      await verify(token);
      expect(compactVerify).toHaveBeenCalledTimes(1);
      clock.set(T0 + 600_000 + 59_000);
      expect(await outcome(verify(token))).toBe('verified');
      expect(compactVerify).toHaveBeenCalledTimes(1);
      // Expired, it is not served: verified again, and refused.
      clock.set(T0 + 600_000 + 60_000);
      expect(await outcome(verify(token))).toBe('expired: token expired');
      expect(compactVerify).toHaveBeenCalledTimes(2);
    });

    it("a cached token's signature under another header or payload is checked, and refused", async () => {
      const { verify } = setup({ cache: true });
      const token = mintToken(primary, { now: T0, expiresIn: 600 });
      expect(await outcome(verify(token))).toBe('verified');
      const [header, , signature] = token.split('.');
      const other = mintToken(primary, { now: T0, expiresIn: 600, claims: { scope: ['admin'] } });
      const otherHeader = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(header, 'base64url').toString()), x: 1 }),
      ).toString('base64url');
      const forged = [
        `${header}.${other.split('.')[1]}.${signature}`,
        `${otherHeader}.${token.split('.')[1]}.${signature}`,
        `x${token}`,
      ];
      compactVerify.mockClear();
      for (const f of forged) {
        expect(await outcome(verify(f))).toMatch(/^invalid: /);
      }
      // `x<token>` is refused for its spelling, before any signature check
      expect(compactVerify).toHaveBeenCalledTimes(forged.length - 1);
      // The cached token is still served from the cache.
      expect(await outcome(verify(token))).toBe('verified');
      expect(compactVerify).toHaveBeenCalledTimes(forged.length - 1);
    });

    it('never caches a refused token', async () => {
      const { verify } = setup({ cache: true });
      const refused = mintToken(stranger, { now: T0 });
      compactVerify.mockClear();
      await outcome(verify(refused));
      await outcome(verify(refused));
      expect(compactVerify).toHaveBeenCalledTimes(2);
    });
  });
});

describe('createJwtVerifier: algorithms', () => {
  const rsa = createSigningKey('rsa');
  const pss = createSigningKey('pss', { alg: 'PS256' });
  const ec = createSigningKey('ec', { type: 'ec' });
  const ed = createSigningKey('ed', { type: 'ed25519' });
  const all = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;

  function verifier(algorithms: readonly ('RS256' | 'PS256' | 'ES256' | 'EdDSA')[]) {
    const clock = manualClock(T0);
    const keys = new KeyStore(
      keyMap(
        [rsa, pss, ec, ed].filter((k) =>
          k.alg === 'PS256' ? algorithms.includes('PS256') : algorithms.includes(k.alg),
        ),
        algorithms,
      ),
      { now: clock.now, algorithms },
    );
    return createJwtVerifier({ keys, clockSkewInSeconds: 60, now: clock.now, algorithms });
  }

  it.each([
    ['RS256', rsa],
    ['PS256 with an RSA key', pss],
    ['ES256 with an EC P-256 key', ec],
    ['EdDSA with an Ed25519 key', ed],
  ])('verifies %s when jwt.algorithms allows it', async (_name, key) => {
    expect(await outcome(verifier(all)(mintToken(key, { now: T0 })))).toBe('verified');
  });

  it('refuses every algorithm jwt.algorithms does not list (RS256 only by default)', async () => {
    const verify = verifier(['RS256']);
    for (const key of [pss, ec, ed]) {
      expect(await outcome(verify(mintToken(key, { now: T0 })))).toBe('invalid: alg is not RS256');
    }
  });

  describe('confusion: the alg must fit the key of the kid', () => {
    const verify = verifier(all);
    const claims = standardClaims({ now: T0 });
    it.each([
      ['an ES256 header on the kid of an RSA key', { alg: 'ES256', kid: 'rsa' }, ec],
      ['an RS256 header on the kid of an EC key', { alg: 'RS256', kid: 'ec' }, rsa],
      ['an EdDSA header on the kid of an RSA key', { alg: 'EdDSA', kid: 'rsa' }, ed],
      ['a PS256 header on the kid of an Ed25519 key', { alg: 'PS256', kid: 'ed' }, pss],
    ])('%s', async (_name, header, signer) => {
      const token = signWith(signer.privateKey, { typ: 'JWT', ...header }, claims);
      expect(await outcome(verify(token))).toBe('invalid: alg does not fit the key of the kid');
    });

    it('an RS256 signature sent as PS256 on the same RSA key does not verify', async () => {
      const token = signWith(
        rsa.privateKey,
        { alg: 'PS256', typ: 'JWT', kid: 'rsa' },
        claims,
        'RS256',
      );
      expect(await outcome(verify(token))).toBe('invalid: signature does not verify');
    });

    it.each(['none', 'HS256', 'HS512', 'RS512', 'ES384'])(
      '%s is refused whatever the list',
      async (alg) => {
        const token = signWith(rsa.privateKey, { alg, typ: 'JWT', kid: 'rsa' }, claims, 'RS256');
        expect(await outcome(verify(token))).toBe('invalid: alg is not RS256, PS256, ES256, EdDSA');
      },
    );

    it('HS256 signed with the certificate as the secret is refused', async () => {
      const input = `${b64url({ alg: 'HS256', typ: 'JWT', kid: 'rsa' })}.${b64url(claims)}`;
      const mac = crypto.createHmac('sha256', rsa.certificatePem).update(input).digest('base64url');
      expect(await outcome(verify(`${input}.${mac}`))).toMatch(/^invalid: alg is not/);
    });
  });
});

describe('createJwtVerifier: audience and issuer', () => {
  const clock = manualClock(T0);
  const keys = new KeyStore(keyMap([primary]), { now: clock.now });
  const verify = createJwtVerifier({
    keys,
    clockSkewInSeconds: 60,
    now: clock.now,
    claims: { audience: ['urn:chain:api'], issuer: ['https://localhost:6882'] },
  });
  const token = (claims: Record<string, unknown>) =>
    mintToken(primary, {
      now: T0,
      claims: { iss: 'https://localhost:6882', aud: 'urn:chain:api', ...claims },
    });

  it.each([
    ['the accepted audience and issuer', {}, 'verified'],
    ['the audience in a list', { aud: ['urn:x', 'urn:chain:api'] }, 'verified'],
    ['another audience', { aud: 'urn:com.networknt' }, 'invalid: aud holds no accepted audience'],
    ['no audience', { aud: undefined }, 'invalid: aud holds no accepted audience'],
    ['another issuer', { iss: 'https://evil' }, 'invalid: iss is not an accepted issuer'],
  ])('%s', async (_name, claims, expected) => {
    expect(await outcome(verify(token(claims)))).toBe(expected);
  });
});

describe('createJwtVerifier: keys of the key server', () => {
  const rotated = createSigningKey('200');
  const reused = createSigningKey('200');

  function withServer(keys: Record<string, string>) {
    const clock = manualClock(T0);
    const fetch = vi.fn(async (kid: string) => keys[kid]);
    const store = new KeyStore(keyMap([primary]), {
      now: clock.now,
      source: { kind: 'kid', fetch },
      policy: { maxAgeMs: 60_000 },
    });
    const verify = createJwtVerifier({
      keys: store,
      clockSkewInSeconds: 60,
      now: clock.now,
      cacheMaxEntries: 10,
    });
    return { verify, clock, fetch, keys };
  }

  it('stops serving a cached token once its key is retired (at the latest after the maximum age)', async () => {
    const server = withServer({ '200': rotated.certificatePem });
    const token = mintToken(rotated, { now: T0, expiresIn: 3600 });
    expect(await outcome(server.verify(token))).toBe('verified');
    delete server.keys['200'];
    server.clock.advance(59_000);
    // still within its age (the background refresh is due, not done yet)
    expect(await outcome(server.verify(token))).toBe('verified');
    server.clock.advance(1_000);
    expect(await outcome(server.verify(token))).toBe('invalid: unknown kid');
  });

  it('fetches a kid again when its key fails (a provider reused the kid), then verifies', async () => {
    const server = withServer({ '200': rotated.certificatePem });
    expect(await outcome(server.verify(mintToken(rotated, { now: T0 })))).toBe('verified');
    server.keys['200'] = reused.certificatePem;
    expect(await outcome(server.verify(mintToken(reused, { now: T0 })))).toBe('verified');
    expect(server.fetch).toHaveBeenCalledTimes(2);
    // forged tokens of that kid cost no look-up within the kid's refetch cooldown
    const forged = mintToken(createSigningKey('200'), { now: T0 });
    expect(await outcome(server.verify(forged))).toBe('invalid: signature does not verify');
    expect(await outcome(server.verify(forged))).toBe('invalid: signature does not verify');
    expect(server.fetch).toHaveBeenCalledTimes(2);
    server.clock.advance(30_000);
    expect(await outcome(server.verify(forged))).toBe('invalid: signature does not verify');
    expect(server.fetch).toHaveBeenCalledTimes(3);
  });
});

describe('createJwtVerifier: malformed and hostile tokens', () => {
  const { verify } = setup();
  const header = (h: Record<string, unknown>) => b64url({ alg: 'RS256', ...h });

  it('refuses every hostile token of the testkit as invalid, each for its defect', async () => {
    const reasons: Record<string, string> = {};
    for (const { name, token } of hostileTokens(primary, { now: T0 })) {
      reasons[name] = await outcome(verify(token));
    }
    const notJws = 'invalid: token is not a compact JWS with a JSON header';
    const notObject = 'invalid: payload is not a JSON object';
    const kid = 'invalid: kid is missing or is not a plain key id';
    const signature = 'invalid: signature does not verify';
    const spelling = 'invalid: token is not three segments of unpadded base64url';
    expect(reasons).toEqual({
      'alg none, no signature': 'invalid: alg is not RS256',
      'alg none with kid': 'invalid: alg is not RS256',
      'HS256 with the certificate as secret': 'invalid: alg is not RS256',
      'HS256 with the public key as secret': 'invalid: alg is not RS256',
      'path-like kid': kid,
      'dot-dot kid': kid,
      'url-like kid': kid,
      'no kid': kid,
      'jwk header with the signer key': signature,
      'jku header': signature,
      'x5u header': signature,
      'x5c header': signature,
      '100 KB token': `invalid: token longer than ${MAX_TOKEN_LENGTH} characters`,
      // refused for their spelling before jose decodes them (it skips characters outside the
      // alphabet and takes padding)
      'header segment not base64url': spelling,
      'payload segment not base64url': spelling,
      'signature segment not base64url': spelling,
      'header with = padding, signed as sent': spelling,
      'payload in standard base64, signed as sent': spelling,
      'signature with = padding': spelling,
      'signature in standard base64': spelling,
      'signature with bits set past its last byte': spelling,
      'two segments': spelling,
      'four segments': spelling,
      'payload not JSON': notObject,
      'payload a JSON array': notObject,
      'payload a JSON string': notObject,
      'payload null': notObject,
      'header not JSON': notJws,
      'exp missing': 'invalid: exp is missing or not a number',
      'exp a string': 'invalid: exp is missing or not a number',
      'exp null': 'invalid: exp is missing or not a number',
      'nbf not a number': 'invalid: nbf is not a number',
      'nbf in the future beyond the skew': 'invalid: token is not valid yet (nbf)',
      'crit header': 'invalid: crit header parameters are not supported',
      'signature of another token': signature,
      'signature truncated': signature,
    });
  });

  it.each([
    ['a.b', 'token is not three segments of unpadded base64url'],
    ['a.b.c.d', 'token is not three segments of unpadded base64url'],
    ['a=.b.c', 'token is not three segments of unpadded base64url'],
    ['.b.c', 'token is not three segments of unpadded base64url'],
    ['.bb.cc', 'token is not three segments of unpadded base64url'],
    ['.bA.cA', 'token is not a compact JWS with a JSON header'],
    [`${b64url('{"alg":')}.${b64url('{}')}.AA`, 'token is not a compact JWS with a JSON header'],
    [`${b64url('[1]')}.${b64url('{}')}.AA`, 'token is not a compact JWS with a JSON header'],
    [`${header({ kid: '100' })}.${b64url('"s"')}.AA`, 'payload is not a JSON object'],
    [`${header({ kid: '100' })}.${b64url('{x')}.AA`, 'payload is not a JSON object'],
    [`${header({ kid: 7 })}.${b64url('{}')}.AA`, 'kid is missing or is not a plain key id'],
    [`${header({ kid: '' })}.${b64url('{}')}.AA`, 'kid is missing or is not a plain key id'],
    [`${header({ kid: '...' })}.${b64url('{}')}.AA`, 'kid is missing or is not a plain key id'],
    [
      `${header({ kid: 'k'.repeat(129) })}.${b64url('{}')}.AA`,
      'kid is missing or is not a plain key id',
    ],
    [`${header({ alg: 'RS384', kid: '100' })}.${b64url('{}')}.AA`, 'alg is not RS256'],
    [
      `${header({ kid: '100', crit: [] })}.${b64url('{}')}.AA`,
      'token is not a compact JWS with a JSON header',
    ],
    // jose knows b64 (RFC 7797); no crit is accepted here at all
    [
      `${header({ kid: '100', crit: ['b64'], b64: true })}.${b64url('{}')}.AA`,
      'crit header parameters are not supported',
    ],
  ])('refuses %s', async (token, reason) => {
    expect(await outcome(verify(token))).toBe(`invalid: ${reason}`);
  });

  it('accepts a token of exactly MAX_TOKEN_LENGTH characters and refuses one more', async () => {
    const sized = (length: number) => {
      const token = (pad: number, extra: Record<string, unknown>) =>
        signToken(primary, { ...standardClaims({ now: T0 }), pad: 'x'.repeat(pad) }, extra);
      // base64url makes 4 characters of 3 bytes: start near the size and step a byte at a time
      const start = Math.floor(((length - token(0, {}).length) * 3) / 4) - 12;
      for (let pad = start; pad < start + 16; pad++) {
        for (const extra of [{}, { x: '' }, { x: 'y' }, { x: 'yy' }]) {
          const candidate = token(pad, extra);
          if (candidate.length === length) return candidate;
        }
      }
      throw new Error(`no token of ${length} characters`);
    };
    expect(await outcome(verify(sized(MAX_TOKEN_LENGTH)))).toBe('verified');
    expect(await outcome(verify(sized(MAX_TOKEN_LENGTH + 1)))).toBe(
      `invalid: token longer than ${MAX_TOKEN_LENGTH} characters`,
    );
  });

  it('never puts token text in its reasons', async () => {
    const secretish = `${header({ kid: '100' })}.${b64url('SECRET-PAYLOAD')}.AA`;
    expect(await outcome(verify(secretish))).toBe('invalid: payload is not a JSON object');
    const inHeader = `${b64url('{"alg":"SECRET')}.${b64url('{}')}.AA`;
    expect(await outcome(verify(inHeader))).not.toMatch(/SECRET/);
  });
});

describe('createJwtVerifier: the claims come before the key (light-4j order)', () => {
  const expiredToken = (key = primary) => mintToken(key, { now: T0 - 3_600_000, expiresIn: 600 });

  it('an expired token is ERR10001 whatever its kid or signature, and costs no look-up', async () => {
    const fetch = vi.fn(async () => undefined);
    const { verify } = setup({ resolver: fetch });
    expect(await outcome(verify(expiredToken(createSigningKey('300'))))).toBe(
      'expired: token expired',
    );
    expect(await outcome(verify(expiredToken(stranger)))).toBe('expired: token expired');
    expect(fetch).not.toHaveBeenCalled();
  });

  it('a token refused for its claims is ERR10000 even while the key server is down', async () => {
    const fetch = vi.fn(() => Promise.reject(new Error('down')));
    const clock = manualClock(T0);
    const keys = new KeyStore(keyMap([primary]), {
      now: clock.now,
      source: { kind: 'kid', fetch },
    });
    const verify = createJwtVerifier({
      keys,
      clockSkewInSeconds: 60,
      now: clock.now,
      claims: { issuer: ['https://localhost:6882'] },
    });
    const other = createSigningKey('300');
    expect(
      await outcome(verify(mintToken(other, { now: T0, claims: { iss: 'https://evil' } }))),
    ).toBe('invalid: iss is not an accepted issuer');
    expect(
      await outcome(verify(signToken(other, { ...standardClaims({ now: T0 }), exp: 'x' }))),
    ).toBe('invalid: exp is missing or not a number');
    expect(fetch).not.toHaveBeenCalled();
    expect(await outcome(verify(mintToken(other, { now: T0 })))).toBe('ERR20005');
  });

  it('the header comes first: a token with alg none is invalid even when expired', async () => {
    const { verify } = setup();
    const [, payload] = expiredToken().split('.');
    expect(await outcome(verify(`${b64url({ alg: 'none', kid: '100' })}.${payload}.`))).toBe(
      'invalid: alg is not RS256',
    );
  });

  it('is expired from exp + skew on the millisecond (no rounding of now)', async () => {
    const { verify, clock } = setup();
    const token = mintToken(primary, { now: T0, expiresIn: 600 });
    clock.set(T0 + 660_000 - 1);
    expect(await outcome(verify(token))).toBe('verified');
    clock.set(T0 + 660_000);
    expect(await outcome(verify(token))).toBe('expired: token expired');
  });

  it('accepts nbf up to now + skew, to the second, and refuses it one second beyond', async () => {
    const { verify } = setup();
    const nbf = (seconds: number) =>
      mintToken(primary, { now: T0, claims: { nbf: T0 / 1000 + seconds } });
    expect(await outcome(verify(nbf(60)))).toBe('verified');
    expect(await outcome(verify(nbf(61)))).toBe('invalid: token is not valid yet (nbf)');
  });
});

describe('createJwtVerifier: signatures as JWS carries them', () => {
  const ec = createSigningKey('ec', { type: 'ec' });
  const clock = manualClock(T0);
  const keys = new KeyStore(keyMap([ec], ['ES256']), { now: clock.now, algorithms: ['ES256'] });
  const verify = createJwtVerifier({
    keys,
    clockSkewInSeconds: 60,
    now: clock.now,
    algorithms: ['ES256'],
  });

  it('ES256: r || s (64 bytes) verifies, the DER form of the same signature does not', async () => {
    const token = mintToken(ec, { now: T0 });
    expect(await outcome(verify(token))).toBe('verified');
    const [h, p] = token.split('.');
    const der = crypto.sign('sha256', Buffer.from(`${h}.${p}`), ec.privateKey);
    expect(await outcome(verify(`${h}.${p}.${der.toString('base64url')}`))).toBe(
      'invalid: signature does not verify',
    );
  });

  it('PS256 with an RSA-PSS key that pins SHA-256', async () => {
    // (@types/node types saltLength as a string; Node takes a number)
    const params: object = { hashAlgorithm: 'sha256', mgf1HashAlgorithm: 'sha256', saltLength: 32 };
    const pair = crypto.generateKeyPairSync('rsa-pss', { modulusLength: 2048, ...params });
    const pssKeys = new KeyStore(new Map([['pss', verificationKey(pair.publicKey, ['PS256'])]]), {
      now: clock.now,
      algorithms: ['PS256'],
    });
    const pssVerify = createJwtVerifier({
      keys: pssKeys,
      clockSkewInSeconds: 60,
      now: clock.now,
      algorithms: ['PS256'],
    });
    const token = signWith(
      pair.privateKey,
      { alg: 'PS256', typ: 'JWT', kid: 'pss' },
      standardClaims({ now: T0 }),
    );
    expect(await outcome(pssVerify(token))).toBe('verified');
  });
});
