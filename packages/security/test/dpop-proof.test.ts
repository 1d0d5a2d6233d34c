import * as jose from 'jose';
import type { Mock } from 'vitest';
import { createDpopKey, dpopProof, jwkThumbprint } from '@chain/testkit';
import type { Algorithm } from '../src/algorithms.js';
import { createDpopProofVerifier, normalizeHtu } from '../src/dpop-proof.js';
import { TokenError } from '../src/token-error.js';
import { HTU, KEYS, METHOD, PROOF_CASES } from './dpop-cases.js';
import { manualClock } from './helpers.js';

// jose's EmbeddedJWK, counted: how often a proof's key is imported.
vi.mock('jose', async (original) => (await import('./counted-jose.js')).countedJose(original));
const importsCounted = () => {
  const imports = jose.EmbeddedJWK as unknown as Mock;
  imports.mockClear();
  return imports;
};

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJjbmYiOnt9fQ.c2ln';
const clock = manualClock();
const verifier = (algorithms: Algorithm[] = ['ES256', 'EdDSA', 'PS256', 'RS256']) =>
  createDpopProofVerifier({ algorithms: [...algorithms], iatWindowSeconds: 60 }, clock.now);
const verify = verifier();
const target = { method: METHOD, uris: [HTU], accessToken: TOKEN };

const refusedWith = async (promise: Promise<unknown>) => {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TokenError);
  expect((err as TokenError).code).toBe('proof');
  return (err as TokenError).message;
};

describe('createDpopProofVerifier (RFC 9449 section 4.3)', () => {
  it.each(Object.entries(KEYS))(
    'accepts a proof of a %s key: its RFC 7638 thumbprint, jti and iat',
    async (_, key) => {
      const proof = dpopProof(key, {
        htm: METHOD,
        htu: HTU,
        accessToken: TOKEN,
        now: clock.now(),
        jti: 'j-1',
      });
      await expect(verify(proof, target)).resolves.toEqual({
        thumbprint: jwkThumbprint(key.jwk),
        jti: 'j-1',
        iat: Math.floor(clock.now() / 1000),
      });
    },
  );

  it.each(PROOF_CASES.map((c) => [c.name, c] as const))('refuses %s', async (_, c) => {
    expect(await refusedWith(verify(c.header(TOKEN, clock.now()), target))).toBe(c.reason);
  });

  it('accepts one proof given as a list of one, and iat exactly 60 seconds either way', async () => {
    const at = (ms: number) =>
      dpopProof(KEYS.ec, { htm: METHOD, htu: HTU, accessToken: TOKEN, now: ms });
    await expect(verify([at(clock.now())], target)).resolves.toBeDefined();
    await expect(verify(at(clock.now() - 60_000), target)).resolves.toBeDefined();
    await expect(verify(at(clock.now() + 60_000), target)).resolves.toBeDefined();
  });

  it('refuses an alg that dpop.algorithms leaves out, naming the list', async () => {
    const proof = dpopProof(KEYS.rsaPss, {
      htm: METHOD,
      htu: HTU,
      accessToken: TOKEN,
      now: clock.now(),
    });
    expect(await refusedWith(verifier(['ES256'])(proof, target))).toBe('alg is not ES256');
  });

  it('compares htu normalized (RFC 3986 6.2.2, 6.2.3), ignoring its query and fragment', async () => {
    for (const htu of [
      'HTTPS://API-B:7442/v1/data',
      'https://api-b:7442/v1/%64ata',
      'https://api-b:7442/v1/./x/../data',
      'https://api-b:7442/v1/data?x=1#f',
    ]) {
      const proof = dpopProof(KEYS.ec, { htm: METHOD, htu, accessToken: TOKEN, now: clock.now() });
      await expect(verify(proof, target)).resolves.toBeDefined();
    }
    const onDefaultPort = dpopProof(KEYS.ec, {
      htm: METHOD,
      htu: 'https://api-b:443/v1/data',
      accessToken: TOKEN,
      now: clock.now(),
    });
    await expect(
      verify(onDefaultPort, { ...target, uris: ['https://api-b/v1/data'] }),
    ).resolves.toBeDefined();
  });

  it('matches any of several URIs (dpop.origins), and none when there is none', async () => {
    const proof = dpopProof(KEYS.ec, {
      htm: METHOD,
      htu: HTU,
      accessToken: TOKEN,
      now: clock.now(),
    });
    await expect(
      verify(proof, { ...target, uris: ['https://a.example/v1/data', HTU] }),
    ).resolves.toBeDefined();
    expect(await refusedWith(verify(proof, { ...target, uris: [] }))).toBe(
      'htu is not the request URI',
    );
  });

  it("keeps a header's key imported, and still checks every signature with it", async () => {
    const fresh = verifier();
    const proof = (key = KEYS.ec, jti = 'j') =>
      dpopProof(KEYS.ec, { htm: METHOD, htu: HTU, accessToken: TOKEN, now: clock.now(), jti })
        .split('.')
        .slice(0, 2)
        .concat(
          dpopProof(key, {
            htm: METHOD,
            htu: HTU,
            accessToken: TOKEN,
            now: clock.now(),
            jti,
          }).split('.')[2],
        )
        .join('.');
    const imports = importsCounted();
    await expect(fresh(proof(), target)).resolves.toBeDefined();
    await expect(fresh(proof(KEYS.ec, 'k'), target)).resolves.toBeDefined();
    expect(imports).toHaveBeenCalledTimes(1);
    // The same header, signed by another key: its signature is still checked.
    expect(await refusedWith(fresh(proof(KEYS.rsa), target))).toBe(
      'signature does not verify with the jwk of the proof',
    );
  });

  it('keeps at most 256 keys: the oldest is imported again', async () => {
    const fresh = verifier();
    const keys = Array.from({ length: 257 }, () => createDpopKey('ec'));
    const proofOf = (key: (typeof keys)[number]) =>
      dpopProof(key, { htm: METHOD, htu: HTU, accessToken: TOKEN, now: clock.now() });
    for (const key of keys) await fresh(proofOf(key), target);
    const imports = importsCounted();
    await fresh(proofOf(keys[256]), target);
    expect(imports).toHaveBeenCalledTimes(0);
    await fresh(proofOf(keys[0]), target);
    expect(imports).toHaveBeenCalledTimes(1);
  });

  it('passes through what is not a refusal of the proof', async () => {
    const broken = createDpopProofVerifier({ algorithms: ['ES256'], iatWindowSeconds: 60 }, () => {
      throw new Error('clock broke');
    });
    await expect(broken(`${'a'.repeat(12)}.bA.cA`, target)).rejects.toThrow('clock broke');
  });
});

describe('normalizeHtu', () => {
  it.each([
    ['HTTPS://Example.COM:443/a/%7e%2f/./b/../c', 'https://example.com/a/~%2F/c'],
    ['http://example.com:80', 'http://example.com/'],
    ['http://example.com:8080/x?q#f', 'http://example.com:8080/x'],
    ['https://[::1]:7441/v1/data', 'https://[::1]:7441/v1/data'],
  ])('%s is %s', (value, normalized) => {
    expect(normalizeHtu(value)).toBe(normalized);
  });

  it.each([
    'https://user@example.com/x',
    'https://user:pw@example.com/x',
    'https://@example.com/x',
    'https:example.com/x',
    'https:\\\\example.com\\x',
    'https://example.com/a\\b',
    'https://exa mple.com/x',
    ' https://example.com/x',
    'https://example.com/x\t',
  ])('%s is another URI than WHATWG URL would make of it: refused', (value) => {
    expect(normalizeHtu(value)).toBeUndefined();
  });

  it.each(['/v1/data', 'ftp://example.com/x', 'not a url', 'file:///etc/passwd'])(
    '%s is not an http(s) URI',
    (value) => {
      expect(normalizeHtu(value)).toBeUndefined();
    },
  );
});
