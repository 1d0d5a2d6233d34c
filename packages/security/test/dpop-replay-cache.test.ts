import { DpopReplayCache } from '../src/dpop-replay-cache.js';

describe('DpopReplayCache', () => {
  it('a jti is fresh once, replayed until its proof expires, and free again after', () => {
    const cache = new DpopReplayCache(10);
    expect(cache.use('a', 160, 100)).toBe('fresh');
    expect(cache.use('a', 160, 100)).toBe('replayed');
    expect(cache.use('a', 170, 160)).toBe('replayed');
    // After 160 the proof is refused by its iat anyway; the entry is dropped.
    expect(cache.use('a', 220, 160.001)).toBe('fresh');
    expect(cache.size).toBe(1);
  });

  it('is bounded: the oldest jti goes, and every proof expiring no later than it is refused', () => {
    const cache = new DpopReplayCache(2);
    expect(cache.use('a', 150, 100)).toBe('fresh');
    expect(cache.use('b', 170, 100)).toBe('fresh');
    expect(cache.use('c', 160, 100)).toBe('fresh'); // 'a' (until 150) goes
    expect(cache.size).toBe(2);
    // 'a' is forgotten: a replay of it is refused as older than the cache remembers.
    expect(cache.use('a', 150, 100)).toBe('forgotten');
    // Still remembered.
    expect(cache.use('b', 170, 100)).toBe('replayed');
    expect(cache.use('c', 160, 100)).toBe('replayed');
    // A newer proof is accepted ('b' goes; the floor rises to 170).
    expect(cache.use('d', 171, 100)).toBe('fresh');
    expect(cache.use('e', 170, 100)).toBe('forgotten');
    expect(cache.use('b', 170, 100)).toBe('forgotten');
  });

  it('the floor only rises', () => {
    const cache = new DpopReplayCache(1);
    cache.use('a', 170, 100);
    cache.use('b', 150, 100); // 'a' goes: the floor is 170
    cache.use('c', 180, 100); // 'b' goes: 150 does not lower it
    expect(cache.use('d', 170, 100)).toBe('forgotten');
    expect(cache.use('e', 171, 100)).toBe('fresh');
  });

  it('drops expired entries from the old end, a few per use', () => {
    const cache = new DpopReplayCache(100);
    for (let i = 0; i < 20; i++) cache.use(`old${i}`, 110, 100);
    cache.use('live', 500, 100);
    cache.use('new', 500, 200);
    expect(cache.size).toBe(20 - 8 + 2);
    cache.use('newer', 500, 200);
    expect(cache.size).toBe(20 - 16 + 3);
  });

  it('stops pruning at the first live entry', () => {
    const cache = new DpopReplayCache(100);
    cache.use('live', 500, 100);
    cache.use('old', 110, 100);
    cache.use('new', 500, 200);
    expect(cache.size).toBe(3);
  });
});
