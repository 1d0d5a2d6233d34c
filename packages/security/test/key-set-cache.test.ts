import crypto from 'node:crypto';
import { createSigningKey } from '@chain/testkit';
import { FAILURE_TTL_MS, SET_COOLDOWN_MS, type KeyPolicy } from '../src/key-policy.js';
import type { FetchedKey, KeySource } from '../src/key-source.js';
import { KeyStore } from '../src/key-store.js';
import { deferred, flush, keyMap, manualClock, outcome, recordedEvents } from './helpers.js';

const primary = createSigningKey('100');
const a = createSigningKey('a');
const b = createSigningKey('b');
const newKid = createSigningKey('new');
const ec = createSigningKey('ec', { type: 'ec' });

const jwk = (key: crypto.KeyObject, extra: Record<string, unknown> = {}): FetchedKey => ({
  material: key.export({ format: 'jwk' }),
  ...extra,
});

/** A JWKS server whose set the test changes; counts fetches. */
function jwksServer(keys: Record<string, FetchedKey>) {
  const server = {
    keys: { ...keys },
    fetches: 0,
    down: false,
    fetch: async () => {
      server.fetches += 1;
      if (server.down) throw new Error('connect ECONNREFUSED');
      return new Map(Object.entries(server.keys));
    },
  };
  return server;
}

function storeWith(
  fetch: () => Promise<ReadonlyMap<string, FetchedKey>>,
  policy: Partial<KeyPolicy> = {},
  algorithms: ('RS256' | 'PS256' | 'ES256' | 'EdDSA')[] = ['RS256'],
) {
  const clock = manualClock();
  const { events, lines } = recordedEvents();
  const source: KeySource = { kind: 'set', fetch };
  const store = new KeyStore(keyMap([primary]), {
    source,
    policy,
    algorithms,
    now: clock.now,
    events,
  });
  return { store, clock, lines };
}

/** The answer to a kid while the key set cannot be fetched. */
const unreachable = (kid: string) =>
  `ERR20005: The verification key for kid ${kid} could not be fetched from the key distribution server`;

describe('KeyStore with a JWKS (KeySetCache)', () => {
  it('keeps every key of one fetch', async () => {
    const server = jwksServer({ a: jwk(a.publicKey), b: jwk(b.publicKey) });
    const { store, lines } = storeWith(server.fetch);
    expect(await outcome(store, 'a')).toBe('key');
    expect(await outcome(store, 'b')).toBe('key');
    expect(store.current('b')).toBeDefined();
    expect(server.fetches).toBe(1);
    expect(lines).toEqual([
      {
        level: 'info',
        message: 'key set fetched from the key server',
        record: { added: ['a', 'b'], retired: [], kids: 2 },
      },
    ]);
  });

  it('shares one fetch between every caller', async () => {
    const answer = deferred<ReadonlyMap<string, FetchedKey>>();
    const fetch = vi.fn(() => answer.promise);
    const { store } = storeWith(fetch);
    const all = Promise.all(['a', 'b', 'x', 'a'].map((kid) => outcome(store, kid)));
    answer.resolve(
      new Map([
        ['a', jwk(a.publicKey)],
        ['b', jwk(b.publicKey)],
      ]),
    );
    expect(await all).toEqual(['key', 'key', 'unknown: unknown kid; not in the key set', 'key']);
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('fetches again for a kid the set lacks at most once per SET_COOLDOWN_MS: a flood costs one fetch per cooldown, a new kid gets in', async () => {
    const server = jwksServer({ a: jwk(a.publicKey) });
    const { store, clock } = storeWith(server.fetch);
    await store.resolve('a');
    const started = clock.now();
    let accepted: number | undefined;
    for (let ms = 0; ms < 60_000; ms += 20) {
      clock.set(started + ms);
      expect(await outcome(store, `made-up-${ms}`)).toMatch(/^unknown/);
      if (ms === 10_000) server.keys.new = jwk(newKid.publicKey);
      if (ms >= 10_000 && accepted === undefined && (await outcome(store, 'new')) === 'key') {
        accepted = ms;
      }
    }
    expect(accepted! - 10_000).toBeLessThanOrEqual(SET_COOLDOWN_MS);
    expect(server.fetches).toBeLessThanOrEqual(1 + 60_000 / SET_COOLDOWN_MS);
  });

  it('answers ERR20005 while the key server fails, remembered for FAILURE_TTL_MS', async () => {
    const server = jwksServer({ a: jwk(a.publicKey) });
    server.down = true;
    const { store, clock, lines } = storeWith(server.fetch);
    expect(await outcome(store, 'a')).toBe(unreachable('a'));
    expect(await outcome(store, 'x')).toBe(unreachable('x'));
    expect(server.fetches).toBe(1);
    expect(lines[0].message).toBe('key set fetch failed');
    server.down = false;
    clock.advance(FAILURE_TTL_MS - 1);
    expect(await outcome(store, 'a')).toBe(unreachable('a'));
    clock.advance(1);
    expect(await outcome(store, 'a')).toBe('key');
  });

  it('gives up after timeoutMs (client.yml request.timeout)', async () => {
    const { store } = storeWith(() => new Promise(() => undefined), { timeoutMs: 30 });
    expect(await outcome(store, 'a')).toBe(unreachable('a'));
  });

  describe('maximum age', () => {
    const policy = { maxAgeMs: 4000 };

    it('refreshes the set in the background from 3/4 of it, and takes retired kids out', async () => {
      const server = jwksServer({ a: jwk(a.publicKey), b: jwk(b.publicKey) });
      const { store, clock, lines } = storeWith(server.fetch, policy);
      const keyOfA = await store.resolve('a');
      delete server.keys.b;
      clock.advance(3000);
      expect(store.current('b')).toBeDefined();
      await flush();
      expect(server.fetches).toBe(2);
      expect(store.current('b')).toBeUndefined();
      // an unchanged key keeps its identity
      expect(store.current('a')).toBe(keyOfA);
      expect(lines[1].record).toEqual({ added: [], retired: ['b'], kids: 1 });
    });

    it('does not use a set past its maximum age without a fresh answer', async () => {
      const server = jwksServer({ a: jwk(a.publicKey) });
      const { store, clock } = storeWith(server.fetch, policy);
      await store.resolve('a');
      server.down = true;
      clock.advance(3000);
      store.current('a');
      await flush();
      for (let i = 0; i < 5; i++) store.current('a');
      await flush();
      expect(server.fetches).toBe(2);
      clock.advance(1000);
      expect(store.current('a')).toBeUndefined();
      expect(await outcome(store, 'a')).toBe(unreachable('a'));
    });
  });

  it('preloads the set (bootstrapFromKeyService)', async () => {
    const server = jwksServer({ a: jwk(a.publicKey), b: jwk(b.publicKey) });
    const { store } = storeWith(server.fetch);
    await store.preload();
    expect(server.fetches).toBe(1);
    expect(store.current('a')).toBeDefined();
    expect(store.current('b')).toBeDefined();
  });

  it('pins the alg of a JWK and leaves out keys jwt.algorithms does not allow', async () => {
    const server = jwksServer({
      a: jwk(a.publicKey, { alg: 'PS256' }),
      ec: jwk(ec.publicKey),
      junk: { material: { kty: 'RSA', n: 'x' } },
      b: jwk(b.publicKey),
    });
    const { store, lines } = storeWith(server.fetch, {}, ['RS256', 'PS256']);
    expect((await store.resolve('a')).algorithms).toEqual(['PS256']);
    expect((await store.resolve('b')).algorithms).toEqual(['RS256', 'PS256']);
    expect(await outcome(store, 'ec')).toBe('unknown: unknown kid; not in the key set');
    expect(
      lines.filter((l) => l.message === 'key of the key server not used').map((l) => l.record.kid),
    ).toEqual(['ec', 'junk']);
  });

  it('fetches the set again after a failed signature, once per REFETCH_COOLDOWN_MS per kid', async () => {
    const reused = createSigningKey('a');
    const server = jwksServer({ a: jwk(a.publicKey) });
    const { store, clock } = storeWith(server.fetch);
    const old = await store.resolve('a');
    server.keys.a = jwk(reused.publicKey);
    // within the set cooldown: nothing is fetched
    expect(await store.refetch('a', old)).toBeUndefined();
    clock.advance(5000);
    const fresh = await store.refetch('a', old);
    expect(fresh!.key.equals(reused.publicKey)).toBe(true);
    expect(await store.refetch('a', old)).toBe(fresh);
    clock.advance(5000);
    expect(await store.refetch('a', fresh!)).toBeUndefined();
    expect(server.fetches).toBe(2);
  });
});
