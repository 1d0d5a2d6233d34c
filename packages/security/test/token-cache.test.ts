import { TokenCache } from '../src/token-cache';

const SKEW = 60;
const entry = (exp: number) => ({ exp, id: exp });

describe('TokenCache', () => {
  it('serves an entry until exp + skew and never at or after it', () => {
    const cache = new TokenCache<{ exp: number }>(10, SKEW);
    cache.set('t', entry(1000), 900);
    expect(cache.get('t', 1000 + SKEW - 1)).toEqual(entry(1000));
    expect(cache.get('t', 1000 + SKEW)).toBeUndefined();
    // the expired entry was removed, not only hidden
    expect(cache.size).toBe(0);
    expect(cache.get('t', 0)).toBeUndefined();
  });

  it('is bounded: the oldest entry goes first', () => {
    const cache = new TokenCache<{ exp: number }>(2, SKEW);
    cache.set('a', entry(5000), 0);
    cache.set('b', entry(5000), 0);
    cache.set('c', entry(5000), 0);
    expect(cache.size).toBe(2);
    expect(cache.get('a', 0)).toBeUndefined();
    expect(cache.get('b', 0)).toBeDefined();
    expect(cache.get('c', 0)).toBeDefined();
  });

  it('replaces an entry of the same token without growing', () => {
    const cache = new TokenCache<{ exp: number }>(2, SKEW);
    cache.set('a', entry(5000), 0);
    cache.set('a', entry(6000), 0);
    expect(cache.size).toBe(1);
    expect(cache.get('a', 0)).toEqual(entry(6000));
  });

  it('drops expired entries from the old end on insert', () => {
    const cache = new TokenCache<{ exp: number }>(100, SKEW);
    for (let i = 0; i < 5; i++) cache.set(`old${i}`, entry(100), 0);
    cache.set('live', entry(9000), 0);
    cache.set('new', entry(9000), 1000);
    expect(cache.size).toBe(2);
  });

  it('prunes at most a few entries per insert', () => {
    const cache = new TokenCache<{ exp: number }>(100, SKEW);
    for (let i = 0; i < 20; i++) cache.set(`old${i}`, entry(100), 0);
    cache.set('new', entry(9000), 1000);
    expect(cache.size).toBe(20 - 8 + 1);
  });

  it('holds nothing with maxEntries 0', () => {
    const cache = new TokenCache<{ exp: number }>(0, SKEW);
    cache.set('a', entry(5000), 0);
    expect(cache.size).toBe(0);
  });
});
