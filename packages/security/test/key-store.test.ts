import crypto from 'node:crypto';
import { createSigningKey } from '@chain/testkit';
import { KeyStore, type KeyResolver } from '../src/key-store';
import { StatusError } from '../src/status-error';
import { TokenError } from '../src/token-error';

const primary = createSigningKey('100');
const rotated = createSigningKey('200');

function clock(start = 1_000_000) {
  let t = start;
  const now = () => t;
  return { now, advance: (ms: number) => (t += ms) };
}

async function outcome(store: KeyStore, kid: string): Promise<string> {
  try {
    await store.resolve(kid);
    return 'key';
  } catch (err) {
    if (err instanceof TokenError) return `unknown: ${err.message}`;
    if (err instanceof StatusError) return `${err.code}: ${err.body.description}`;
    throw err;
  }
}

describe('KeyStore', () => {
  const configured = new Map([['100', primary.publicKey]]);

  it('answers configured kids without any look-up', async () => {
    const resolver = jest.fn<ReturnType<KeyResolver>, [string]>();
    const store = new KeyStore(configured, { resolver, now: clock().now });
    expect(store.known('100')).toBe(primary.publicKey);
    await expect(store.resolve('100')).resolves.toBe(primary.publicKey);
    expect(resolver).not.toHaveBeenCalled();
  });

  it('refuses an unknown kid when there is no key server', async () => {
    const store = new KeyStore(configured, { now: clock().now });
    expect(await outcome(store, 'nope')).toBe('unknown: unknown kid');
  });

  it('fetches a new kid once and keeps it (rotation)', async () => {
    const resolver = jest.fn(async () => rotated.certificatePem);
    const store = new KeyStore(configured, { resolver, now: clock().now });
    const key = await store.resolve('200');
    expect(key.export({ format: 'jwk' })).toEqual(rotated.publicKey.export({ format: 'jwk' }));
    expect(store.known('200')).toBe(key);
    await store.resolve('200');
    expect(resolver).toHaveBeenCalledTimes(1);
    expect(resolver).toHaveBeenCalledWith('200');
  });

  it('accepts a PEM public key, a Buffer and a KeyObject from the resolver', async () => {
    const pem = rotated.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const materials = [
      pem,
      Buffer.from(rotated.certificatePem),
      rotated.publicKey,
      rotated.privateKey,
    ];
    for (const material of materials) {
      const store = new KeyStore(configured, { resolver: async () => material, now: clock().now });
      const key = await store.resolve('200');
      expect(key.type).toBe('public');
      expect(key.asymmetricKeyType).toBe('rsa');
    }
  });

  it('shares one look-up between concurrent requests of one kid (single flight)', async () => {
    let release!: (pem: string) => void;
    const resolver = jest.fn(() => new Promise<string>((resolve) => (release = resolve)));
    const store = new KeyStore(configured, { resolver, now: clock().now });
    const all = Promise.all(Array.from({ length: 50 }, () => store.resolve('200')));
    release(rotated.certificatePem);
    const keys = await all;
    expect(new Set(keys).size).toBe(1);
    expect(resolver).toHaveBeenCalledTimes(1);
  });

  it('remembers a kid the server does not know until notFoundTtlMs has passed', async () => {
    const c = clock();
    const resolver = jest.fn(async () => undefined);
    const store = new KeyStore(configured, {
      resolver,
      now: c.now,
      policy: { notFoundTtlMs: 1000 },
    });
    expect(await outcome(store, 'ghost')).toBe('unknown: unknown kid');
    c.advance(999);
    expect(await outcome(store, 'ghost')).toBe('unknown: unknown kid');
    expect(resolver).toHaveBeenCalledTimes(1);
    c.advance(1);
    expect(await outcome(store, 'ghost')).toBe('unknown: unknown kid');
    expect(resolver).toHaveBeenCalledTimes(2);
  });

  it('rate-limits look-ups of made-up kids globally (1,000 kids, a handful of look-ups)', async () => {
    const c = clock();
    const resolver = jest.fn(async () => undefined);
    const store = new KeyStore(configured, {
      resolver,
      now: c.now,
      policy: { burst: 3, refillMs: 1000 },
    });
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_v, i) => outcome(store, `made-up-${i}`)),
    );
    expect(resolver).toHaveBeenCalledTimes(3);
    expect(results.filter((r) => r === 'unknown: unknown kid')).toHaveLength(3);
    expect(results.filter((r) => /rate-limited/.test(r))).toHaveLength(997);
    // one more look-up per refill interval
    c.advance(1000);
    expect(await outcome(store, 'new-1')).toBe('unknown: unknown kid');
    expect(await outcome(store, 'new-2')).toMatch(/rate-limited/);
    expect(resolver).toHaveBeenCalledTimes(4);
  });

  it('answers ERR20005 when the key server fails, and keeps answering it for failureTtlMs', async () => {
    const c = clock();
    const resolver = jest.fn(async (): Promise<string> => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:6886');
    });
    const store = new KeyStore(configured, { resolver, now: c.now, policy: { failureTtlMs: 500 } });
    const expected =
      'ERR20005: The verification key for kid 200 could not be fetched from the key distribution server';
    expect(await outcome(store, '200')).toBe(expected);
    expect(await outcome(store, '200')).toBe(expected);
    expect(resolver).toHaveBeenCalledTimes(1);
    // the server is back: after the cool-down the kid is fetched again
    resolver.mockImplementation(async () => rotated.certificatePem);
    c.advance(500);
    expect(await outcome(store, '200')).toBe('key');
    expect(resolver).toHaveBeenCalledTimes(2);
  });

  it('keeps the cause of a failure and leaks none of it into the body', async () => {
    const cause = new Error('boom');
    const store = new KeyStore(configured, {
      resolver: async () => Promise.reject(cause),
      now: clock().now,
    });
    const err = (await store.resolve('200').catch((e: unknown) => e)) as StatusError;
    expect(err.cause).toBe(cause);
    expect(JSON.stringify(err.body)).not.toMatch(/boom/);
  });

  it('gives up after timeoutMs with ERR20005', async () => {
    const store = new KeyStore(configured, {
      resolver: () => new Promise(() => undefined),
      now: clock().now,
      policy: { timeoutMs: 50 },
    });
    const started = Date.now();
    const err = (await store.resolve('200').catch((e: unknown) => e)) as StatusError;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(err.code).toBe('ERR20005');
    expect((err.cause as Error).message).toBe('no answer within 50 ms');
  });

  it('treats key material that is not an RSA public key as a key server failure', async () => {
    const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    for (const material of ['not a pem', ec]) {
      const store = new KeyStore(configured, { resolver: async () => material, now: clock().now });
      expect(await outcome(store, '200')).toMatch(/^ERR20005/);
    }
  });

  it('bounds the remembered misses and fetched keys', async () => {
    const c = clock();
    const resolver = jest.fn(async (kid: string) =>
      kid.startsWith('real') ? rotated.certificatePem : undefined,
    );
    const store = new KeyStore(configured, {
      resolver,
      now: c.now,
      policy: { maxEntries: 2, burst: 100 },
    });
    for (const kid of ['real1', 'real2', 'real3']) await store.resolve(kid);
    expect(store.known('real1')).toBeUndefined();
    expect(store.known('real3')).toBeDefined();
    for (const kid of ['x1', 'x2', 'x3']) await outcome(store, kid);
    // x1 was forgotten, so it is looked up again; x3 is still remembered
    await outcome(store, 'x1');
    await outcome(store, 'x3');
    expect(resolver.mock.calls.map(([k]) => k)).toEqual([
      'real1',
      'real2',
      'real3',
      'x1',
      'x2',
      'x3',
      'x1',
    ]);
  });
});
