import { IntrospectionCache } from '../src/introspection.js';
import { deferred, manualClock } from './helpers.js';

const T0 = 1_700_000_000_000;

/** An answer kept until `until` (epoch ms), or not kept (undefined). */
interface Answer {
  name: string;
  until?: number;
}
const lifeOf = (a: Answer) => a.until;

describe('IntrospectionCache', () => {
  const setup = (maxEntries = 10, maxAgeMs = 60_000) => {
    const clock = manualClock(T0);
    const cache = new IntrospectionCache<Answer>(maxEntries, maxAgeMs, clock.now);
    const calls: string[] = [];
    const answer = (key: string, result: Answer | Error = { name: key, until: T0 + 600_000 }) =>
      cache.answer(
        key,
        async () => {
          calls.push(key);
          if (result instanceof Error) throw result;
          return result;
        },
        lifeOf,
      );
    return { clock, cache, calls, answer };
  };

  it('asks once and serves the kept answer until its life ends, not at that millisecond', async () => {
    const { clock, calls, answer } = setup();
    const a = { name: 'a', until: T0 + 10_000 };
    expect(await answer('k', a)).toBe(a);
    clock.set(T0 + 9_999);
    expect(await answer('k', { name: 'other' })).toBe(a);
    expect(calls).toEqual(['k']);
    clock.set(T0 + 10_000);
    const fresh = { name: 'fresh', until: T0 + 20_000 };
    expect(await answer('k', fresh)).toBe(fresh);
    expect(calls).toEqual(['k', 'k']);
  });

  it('never keeps an answer longer than maxAgeMs after its call, whatever its life', async () => {
    const { clock, calls, answer } = setup(10, 5_000);
    await answer('k', { name: 'a', until: Infinity });
    clock.set(T0 + 4_999);
    await answer('k');
    expect(calls).toHaveLength(1);
    clock.set(T0 + 5_000);
    await answer('k');
    expect(calls).toHaveLength(2);
  });

  it('counts maxAgeMs from when the call was made, not from when it was answered', async () => {
    const { clock, cache, calls } = setup(10, 5_000);
    const pending = deferred<Answer>();
    const first = cache.answer('k', () => pending.promise, lifeOf);
    clock.set(T0 + 4_000); // a slow answer
    pending.resolve({ name: 'a', until: Infinity });
    await first;
    clock.set(T0 + 4_999);
    await cache.answer('k', async () => (calls.push('k'), { name: 'b' }), lifeOf);
    clock.set(T0 + 5_000);
    await cache.answer('k', async () => (calls.push('k'), { name: 'b' }), lifeOf);
    expect(calls).toEqual(['k']);
  });

  it('single flight: concurrent requests with one key share one call, and its failure', async () => {
    const { cache } = setup();
    const pending = deferred<Answer>();
    const ask = vi.fn(() => pending.promise);
    const all = [1, 2, 3].map(() => cache.answer('k', ask, lifeOf));
    const other = cache.answer('other', async () => ({ name: 'o' }), lifeOf);
    expect(ask).toHaveBeenCalledTimes(1);
    pending.reject(new Error('unreachable'));
    for (const p of all) await expect(p).rejects.toThrow('unreachable');
    await expect(other).resolves.toEqual({ name: 'o' });
  });

  it('keeps no failure: the next request asks again', async () => {
    const { calls, cache, answer } = setup();
    await expect(answer('k', new Error('down'))).rejects.toThrow('down');
    expect(cache.size).toBe(0);
    await expect(answer('k')).resolves.toMatchObject({ name: 'k' });
    expect(calls).toEqual(['k', 'k']);
  });

  it('keeps no answer without a life (inactive), nor one whose life is over or ends now', async () => {
    const { calls, cache, answer } = setup();
    for (const key of ['inactive', 'inactive']) await answer(key, { name: 'no' });
    for (const until of [T0 - 1, T0, T0 + 1]) await answer(`past${until}`, { name: 'old', until });
    await answer(`past${T0 + 1}`, { name: 'old', until: T0 + 1 });
    expect(calls).toEqual([
      'inactive',
      'inactive',
      `past${T0 - 1}`,
      `past${T0}`,
      `past${T0 + 1}`,
      `past${T0 + 1}`,
    ]);
    expect(cache.size).toBe(0);
  });

  it('keeps nothing with maxAgeMs 0 or maxEntries 0, and still shares a call in flight', async () => {
    for (const [entries, age] of [
      [10, 0],
      [0, 60_000],
    ]) {
      const { cache, answer, calls } = setup(entries, age);
      await answer('k');
      await answer('k');
      expect([cache.size, calls.length]).toEqual([0, 2]);
      const pending = deferred<Answer>();
      const ask = vi.fn(() => pending.promise);
      const both = [cache.answer('j', ask, lifeOf), cache.answer('j', ask, lifeOf)];
      pending.resolve({ name: 'j', until: Infinity });
      await Promise.all(both);
      expect(ask).toHaveBeenCalledTimes(1);
    }
  });

  it('holds at most maxEntries answers: the least recently used goes first', async () => {
    const { cache, calls, answer } = setup(2);
    await answer('a');
    await answer('b');
    await answer('a'); // kept, and now the most recently used
    await answer('c'); // b goes
    expect(cache.size).toBe(2);
    await answer('a'); // kept
    await answer('b'); // asked again
    expect(calls).toEqual(['a', 'b', 'c', 'b']);
  });

  it('drops an expired answer when it is looked up', async () => {
    const { clock, cache, answer } = setup();
    await answer('k', { name: 'x', until: T0 + 1_000 });
    expect(cache.size).toBe(1);
    clock.set(T0 + 2_000);
    await answer('k', { name: 'inactive now' });
    expect(cache.size).toBe(0);
  });
});
