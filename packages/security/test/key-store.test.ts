import crypto from 'node:crypto';
import { createSigningKey } from '@chain/testkit';
import {
  DEFAULT_KEY_POLICY,
  FAILURE_TTL_MS,
  LOOKUP_BURST,
  LOOKUP_INTERVAL_MS,
  MAX_KIDS,
  NOT_FOUND_TTL_MS,
  REFETCH_COOLDOWN_MS,
  SET_COOLDOWN_MS,
  type KeyPolicy,
} from '../src/key-policy.js';
import type { KeySource } from '../src/key-source.js';
import { KeyStore } from '../src/key-store.js';
import type { KeyMaterial } from '../src/public-key.js';
import { StatusError } from '@chain/errors';
import { deferred, flush, keyMap, manualClock, outcome, recordedEvents } from './helpers.js';

const primary = createSigningKey('100');
const rotated = createSigningKey('200');
const reused = createSigningKey('200');
const ec = createSigningKey('300', { type: 'ec' });

type Fetch = (kid: string) => Promise<KeyMaterial | undefined>;

/** A key server by kid whose answers the test changes: kid -> PEM; missing: "no such kid". */
function keyServer(keys: Record<string, KeyMaterial> = {}) {
  const asked: string[] = [];
  const server: {
    keys: Record<string, KeyMaterial>;
    asked: string[];
    down: boolean;
    fetch: Fetch;
  } = {
    keys: { ...keys },
    asked,
    down: false,
    fetch: (async (kid: string) => {
      asked.push(kid);
      if (server.down) throw new Error('connect ECONNREFUSED 127.0.0.1:6886');
      return server.keys[kid];
    }) as Fetch,
  };
  return server;
}

function storeWith(fetch: Fetch, policy: Partial<KeyPolicy> = {}, start?: number) {
  const clock = manualClock(start);
  const { events, lines } = recordedEvents();
  const source: KeySource = { kind: 'kid', fetch };
  const store = new KeyStore(keyMap([primary]), { source, policy, now: clock.now, events });
  return { store, clock, lines };
}

const jwkOf = (key: crypto.KeyObject) => key.export({ format: 'jwk' });

describe('KeyStore', () => {
  it('has the documented policy', () => {
    expect({
      ...DEFAULT_KEY_POLICY,
      NOT_FOUND_TTL_MS,
      FAILURE_TTL_MS,
      LOOKUP_BURST,
      LOOKUP_INTERVAL_MS,
      SET_COOLDOWN_MS,
      REFETCH_COOLDOWN_MS,
      MAX_KIDS,
    }).toEqual({
      timeoutMs: 3000,
      maxAgeMs: 600_000,
      NOT_FOUND_TTL_MS: 30_000,
      FAILURE_TTL_MS: 5_000,
      LOOKUP_BURST: 5,
      LOOKUP_INTERVAL_MS: 1_000,
      SET_COOLDOWN_MS: 5_000,
      REFETCH_COOLDOWN_MS: 30_000,
      MAX_KIDS: 1000,
    });
  });

  it('answers configured kids without any look-up', async () => {
    const server = keyServer();
    const { store } = storeWith(server.fetch);
    expect(store.current('100')).toBeDefined();
    expect(await store.resolve('100')).toBe(store.current('100'));
    expect(server.asked).toEqual([]);
  });

  it('refuses an unknown kid when there is no key server', async () => {
    const store = new KeyStore(keyMap([primary]), { now: manualClock().now });
    expect(await outcome(store, 'nope')).toBe('unknown: unknown kid');
    await expect(store.preload()).resolves.toBeUndefined();
    expect(await store.refetch('100', store.current('100')!)).toBeUndefined();
  });

  it('fetches a new kid once and keeps it', async () => {
    const server = keyServer({ '200': rotated.certificatePem });
    const { store, lines } = storeWith(server.fetch);
    const key = await store.resolve('200');
    expect(jwkOf(key.key)).toEqual(jwkOf(rotated.publicKey));
    expect(key.algorithms).toEqual(['RS256']);
    expect(store.current('200')).toBe(key);
    await store.resolve('200');
    expect(server.asked).toEqual(['200']);
    expect(lines).toEqual([
      { level: 'info', message: 'key fetched from the key server', record: { kid: '200' } },
    ]);
  });

  it('shares one look-up between concurrent requests of one kid', async () => {
    const answer = deferred<KeyMaterial | undefined>();
    const fetch = vi.fn(() => answer.promise);
    const { store } = storeWith(fetch);
    const all = Promise.all(Array.from({ length: 50 }, () => store.resolve('200')));
    answer.resolve(rotated.certificatePem);
    expect(new Set(await all).size).toBe(1);
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('remembers a kid the server does not know for NOT_FOUND_TTL_MS', async () => {
    const server = keyServer();
    const { store, clock } = storeWith(server.fetch);
    expect(await outcome(store, 'ghost')).toBe('unknown: unknown kid');
    clock.advance(NOT_FOUND_TTL_MS - 1);
    expect(await outcome(store, 'ghost')).toBe('unknown: unknown kid');
    expect(server.asked).toEqual(['ghost']);
    clock.advance(1);
    expect(await outcome(store, 'ghost')).toBe('unknown: unknown kid');
    expect(server.asked).toEqual(['ghost', 'ghost']);
  });

  it('answers ERR20005 when the key server fails, remembered for FAILURE_TTL_MS, then asks again', async () => {
    const server = keyServer({ '200': rotated.certificatePem });
    server.down = true;
    const { store, clock, lines } = storeWith(server.fetch);
    const expected =
      'ERR20005: The verification key for kid 200 could not be fetched from the key distribution server';
    expect(await outcome(store, '200')).toBe(expected);
    expect(await outcome(store, '200')).toBe(expected);
    expect(server.asked).toEqual(['200']);
    expect(lines[0]).toMatchObject({
      level: 'warn',
      message: 'key look-up failed',
      record: { kid: '200' },
    });
    server.down = false;
    clock.advance(FAILURE_TTL_MS - 1);
    expect(await outcome(store, '200')).toBe(expected);
    clock.advance(1);
    expect(await outcome(store, '200')).toBe('key');
  });

  it('keeps the cause of a failure and leaks none of it into the body', async () => {
    const cause = new Error('boom');
    const { store } = storeWith(() => Promise.reject(cause));
    const err = (await store.resolve('200').catch((e: unknown) => e)) as StatusError;
    expect(err.cause).toBe(cause);
    expect(JSON.stringify(err.body)).not.toMatch(/boom/);
  });

  it('gives up after timeoutMs (client.yml request.timeout) with ERR20005', async () => {
    const { store } = storeWith(() => new Promise(() => undefined), { timeoutMs: 50 });
    const started = Date.now();
    const err = (await store.resolve('200').catch((e: unknown) => e)) as StatusError;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(err.code).toBe('ERR20005');
    expect((err.cause as Error).message).toBe('no answer within 50 ms');
  });

  it('treats an answer that is not a public key (text, a private key) as a key server failure', async () => {
    for (const material of ['<html>oops</html>', rotated.privateKey]) {
      const { store } = storeWith(async () => material);
      expect(await outcome(store, '200')).toMatch(/^ERR20005/);
    }
  });

  it('treats a key jwt.algorithms does not allow as no key for the kid (401), and says why', async () => {
    const { store, lines } = storeWith(async () => ec.certificatePem);
    expect(await outcome(store, '300')).toBe('unknown: unknown kid');
    expect(lines).toEqual([
      {
        level: 'warn',
        message: 'key of the key server not used',
        record: { kid: '300', reason: 'a EC prime256v1 key (ES256); jwt.algorithms allows RS256' },
      },
    ]);
  });

  describe('a flood of made-up kids (PEM by kid)', () => {
    it('costs the key server LOOKUP_BURST, then one request per LOOKUP_INTERVAL_MS', async () => {
      const server = keyServer();
      const { store, clock } = storeWith(server.fetch);
      const results = await Promise.all(
        Array.from({ length: 1000 }, (_v, i) => outcome(store, `made-up-${i}`)),
      );
      expect(server.asked).toHaveLength(5);
      expect(results.filter((r) => r === 'unknown: unknown kid')).toHaveLength(5);
      expect(results.filter((r) => /rate-limited/.test(r))).toHaveLength(995);
      clock.advance(1000);
      expect(await outcome(store, 'next-1')).toBe('unknown: unknown kid');
      expect(await outcome(store, 'next-2')).toMatch(/rate-limited/);
      expect(server.asked).toHaveLength(6);
    });

    it('cannot keep out a kid the key server really has: 50 made-up kids a second for a minute', async () => {
      const server = keyServer();
      const { store, clock } = storeWith(server.fetch);
      const started = clock.now();
      let published: number | undefined;
      let accepted: number | undefined;
      for (let ms = 0; ms < 60_000; ms += 20) {
        clock.set(started + ms);
        await outcome(store, `made-up-${ms}`);
        if (ms === 10_000) {
          server.keys['200'] = rotated.certificatePem;
          published = clock.now();
        }
        // clients holding tokens of the new kid, 5 requests a second
        if (published !== undefined && accepted === undefined && ms % 200 === 0) {
          if ((await outcome(store, '200')) === 'key') accepted = clock.now();
        }
      }
      expect(accepted! - published!).toBeLessThanOrEqual(2_000);
      // the key server saw at most about one request a second
      expect(server.asked.length).toBeLessThanOrEqual(5 + 61);
    });
  });

  describe('maximum age', () => {
    const policy = { maxAgeMs: 4000 };

    it('refreshes a fetched key in the background from 3/4 of maxAgeMs, while it is used', async () => {
      const server = keyServer({ '200': rotated.certificatePem });
      const { store, clock } = storeWith(server.fetch, policy);
      const first = await store.resolve('200');
      clock.advance(2999);
      expect(store.current('200')).toBe(first);
      expect(server.asked).toEqual(['200']);
      clock.advance(1);
      expect(store.current('200')).toBe(first);
      await flush();
      expect(server.asked).toEqual(['200', '200']);
      // the refreshed key is used from now on, for a new maximum age
      clock.advance(3999);
      expect(store.current('200')).toBeDefined();
    });

    it('refuses a kid the key server no longer has, at the latest after maxAgeMs (defect: fetched keys lived forever)', async () => {
      const server = keyServer({ '200': rotated.certificatePem });
      const { store, clock, lines } = storeWith(server.fetch, policy);
      await store.resolve('200');
      delete server.keys['200'];
      clock.advance(4000);
      expect(store.current('200')).toBeUndefined();
      expect(await outcome(store, '200')).toBe('unknown: unknown kid');
      expect(lines.map((l) => l.message)).toContain('key retired by the key server');
    });

    it('drops a retired kid as soon as the background refresh says so', async () => {
      const server = keyServer({ '200': rotated.certificatePem });
      const { store, clock } = storeWith(server.fetch, policy);
      await store.resolve('200');
      delete server.keys['200'];
      clock.advance(3000);
      store.current('200');
      await flush();
      expect(store.current('200')).toBeUndefined();
      expect(await outcome(store, '200')).toBe('unknown: unknown kid');
    });

    it('does not trust a key past its maximum age while the key server is down (ERR20005)', async () => {
      const server = keyServer({ '200': rotated.certificatePem });
      const { store, clock } = storeWith(server.fetch, policy);
      await store.resolve('200');
      server.down = true;
      clock.advance(3000);
      // the background refresh fails; the key is still within its age
      expect(store.current('200')).toBeDefined();
      await flush();
      const asked = server.asked.length;
      // no retry on every request while the failure is remembered
      for (let i = 0; i < 10; i++) store.current('200');
      await flush();
      expect(server.asked).toHaveLength(asked);
      clock.advance(1000);
      expect(await outcome(store, '200')).toMatch(/^ERR20005/);
    });

    it('fetches a known kid past its age outside the look-up budget', async () => {
      const server = keyServer({ '200': rotated.certificatePem });
      const { store, clock } = storeWith(server.fetch, policy);
      const exhaust = async () => {
        for (let i = 0; i < LOOKUP_BURST; i++) await outcome(store, `made-up-${clock.now()}-${i}`);
        expect(await outcome(store, 'made-up')).toMatch(/rate-limited/);
      };
      await store.resolve('200');
      await exhaust();
      clock.advance(4000);
      await exhaust();
      expect(await outcome(store, '200')).toBe('key');
    });
  });

  describe('a kid reused with a new key (refetch after a failed signature)', () => {
    it('fetches the kid again, at most once per REFETCH_COOLDOWN_MS', async () => {
      const server = keyServer({ '200': rotated.certificatePem });
      const { store, clock } = storeWith(server.fetch);
      const old = await store.resolve('200');
      server.keys['200'] = reused.certificatePem;
      const fresh = await store.refetch('200', old);
      expect(jwkOf(fresh!.key)).toEqual(jwkOf(reused.publicKey));
      // someone else already refreshed: the current key, no fetch
      expect(await store.refetch('200', old)).toBe(fresh);
      expect(await store.refetch('200', fresh!)).toBeUndefined();
      expect(server.asked).toEqual(['200', '200']);
      clock.advance(REFETCH_COOLDOWN_MS - 1);
      expect(await store.refetch('200', fresh!)).toBeUndefined();
      expect(server.asked).toEqual(['200', '200']);
      clock.advance(1);
      expect(await store.refetch('200', fresh!)).toBeUndefined(); // the same key again
      expect(server.asked).toEqual(['200', '200', '200']);
      // and it kept its identity (tokens it verified stay cached)
      expect(store.current('200')).toBe(fresh);
    });

    it('never refetches a configured certificate or an unknown kid', async () => {
      const server = keyServer();
      const { store } = storeWith(server.fetch);
      expect(await store.refetch('100', store.current('100')!)).toBeUndefined();
      expect(await store.refetch('999', store.current('100')!)).toBeUndefined();
      expect(server.asked).toEqual([]);
    });

    it('answers undefined when the refetch fails', async () => {
      const server = keyServer({ '200': rotated.certificatePem });
      const { store } = storeWith(server.fetch);
      const old = await store.resolve('200');
      server.down = true;
      expect(await store.refetch('200', old)).toBeUndefined();
    });
  });

  it('bounds the fetched keys: past MAX_KIDS the oldest goes', async () => {
    const fetch = vi.fn(async () => rotated.certificatePem);
    const { store, clock } = storeWith(fetch, { maxAgeMs: 10_000_000 });
    for (let i = 0; i <= MAX_KIDS; i++) {
      await store.resolve(`real-${i}`);
      clock.advance(LOOKUP_INTERVAL_MS);
    }
    expect(fetch).toHaveBeenCalledTimes(MAX_KIDS + 1);
    expect(store.current('real-0')).toBeUndefined();
    expect(store.current('real-1')).toBeDefined();
    expect(store.current(`real-${MAX_KIDS}`)).toBeDefined();
  });

  it('gives a free look-up to a kid asked for more often, while the asker is told it waits', async () => {
    const server = keyServer({ '200': rotated.certificatePem });
    const { store, clock } = storeWith(server.fetch);
    const first = Array.from({ length: LOOKUP_BURST }, (_v, i) => `first-${i}`);
    for (const kid of first) expect(await outcome(store, kid)).toBe('unknown: unknown kid');
    await outcome(store, '200');
    await outcome(store, '200');
    clock.advance(LOOKUP_INTERVAL_MS);
    expect(await outcome(store, 'made-up')).toBe(
      'unknown: unknown kid; a kid asked for more often is looked up first',
    );
    await flush();
    expect(server.asked).toEqual([...first, '200']);
    expect(await outcome(store, '200')).toBe('key');
  });
});
