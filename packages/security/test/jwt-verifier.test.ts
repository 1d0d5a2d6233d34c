import crypto from 'node:crypto';
import { createSigningKey, mintToken, signToken, standardClaims } from '@chain/testkit';
import { createJwtVerifier, type VerifiedToken } from '../src/jwt-verifier';
import { KeyStore } from '../src/key-store';
import { StatusError } from '../src/status-error';
import { TokenCache } from '../src/token-cache';
import { TokenError } from '../src/token-error';
import { manualClock } from './helpers';

const primary = createSigningKey('100');
const secondary = createSigningKey('101');
const stranger = createSigningKey('100');
const T0 = 1_700_000_000_000;

function setup(options: { cache?: boolean; resolver?: () => Promise<string | undefined> } = {}) {
  const clock = manualClock(T0);
  const keys = new KeyStore(
    new Map([
      ['100', primary.publicKey],
      ['101', secondary.publicKey],
    ]),
    { now: clock.now, resolver: options.resolver },
  );
  const cache = options.cache ? new TokenCache<VerifiedToken>(10, 60) : undefined;
  const verify = createJwtVerifier({ keys, clockSkewInSeconds: 60, now: clock.now, cache });
  return { clock, verify, cache };
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'verified';
  } catch (err) {
    if (err instanceof TokenError) return `${err.kind}: ${err.message}`;
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
      const { verify, clock, cache } = setup({ cache: true });
      const token = mintToken(primary, { now: T0, expiresIn: 600 });
      const spy = jest.spyOn(crypto, 'verify');
      await verify(token);
      await verify(token);
      await verify(token);
      expect(spy).toHaveBeenCalledTimes(1);
      spy.mockRestore();
      expect(cache!.size).toBe(1);
      clock.set(T0 + 600_000 + 59_000);
      expect(await outcome(verify(token))).toBe('verified');
      clock.set(T0 + 600_000 + 60_000);
      expect(await outcome(verify(token))).toBe('expired: token expired');
      expect(cache!.size).toBe(0);
    });

    it('never caches a refused token', async () => {
      const { verify, cache } = setup({ cache: true });
      await outcome(verify(mintToken(stranger, { now: T0 })));
      expect(cache!.size).toBe(0);
    });
  });
});
