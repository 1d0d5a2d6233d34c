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

  describe('tokens that share their last characters', () => {
    const tail = 's'.repeat(64);
    const a = `header.payload-a.${tail}`;
    const b = `header.payload-b.${tail}`;

    it('a token ending like a cached one is not served its entry, nor removes it', () => {
      const cache = new TokenCache<{ exp: number }>(10, SKEW);
      cache.set(a, entry(5000), 0);
      expect(cache.get(b, 0)).toBeUndefined();
      expect(cache.get(a.slice(1), 0)).toBeUndefined();
      expect(cache.get(`x${a}`, 0)).toBeUndefined();
      expect(cache.get(tail, 0)).toBeUndefined();
      // An expired look-up of the other token leaves the cached one alone.
      expect(cache.get(b, 9999)).toBeUndefined();
      expect(cache.get(a, 0)).toEqual(entry(5000));
    });

    it('the later of two such tokens replaces the earlier: one entry, never the wrong one', () => {
      const cache = new TokenCache<{ exp: number }>(10, SKEW);
      cache.set(a, entry(5000), 0);
      cache.set(b, entry(6000), 0);
      expect(cache.size).toBe(1);
      expect(cache.get(a, 0)).toBeUndefined();
      expect(cache.get(b, 0)).toEqual(entry(6000));
    });

    it('short tokens are keyed whole', () => {
      const cache = new TokenCache<{ exp: number }>(10, SKEW);
      cache.set('short', entry(5000), 0);
      cache.set('shorter', entry(6000), 0);
      expect(cache.get('short', 0)).toEqual(entry(5000));
      expect(cache.get('shorter', 0)).toEqual(entry(6000));
      expect(cache.get('hort', 0)).toBeUndefined();
    });
  });

  it('holds nothing with maxEntries 0', () => {
    const cache = new TokenCache<{ exp: number }>(0, SKEW);
    cache.set('a', entry(5000), 0);
    expect(cache.size).toBe(0);
  });
});
