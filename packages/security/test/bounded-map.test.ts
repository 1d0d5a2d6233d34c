import { BoundedMap } from '../src/bounded-map.js';
import { MAX_KIDS } from '../src/key-policy.js';

describe('BoundedMap', () => {
  it('holds MAX_KIDS kids: a new kid drops the oldest, a kid set again is the newest', () => {
    const map = new BoundedMap<string, number>(MAX_KIDS);
    for (let i = 0; i < MAX_KIDS; i++) map.set(`k${i}`, i);
    map.set('k0', -1);
    map.set('new', 0);
    expect(map.size).toBe(MAX_KIDS);
    expect(map.has('k1')).toBe(false);
    expect(map.get('k0')).toBe(-1);
    expect([...map.keys()].slice(-2)).toEqual(['k0', 'new']);
  });

  it('drops the entry its victim rule picks, and says which', () => {
    const dropped: [string, number][] = [];
    const map = new BoundedMap<string, number>(2, {
      victim: (m) => [...m.keys()][1],
      onDrop: (key, value) => dropped.push([key, value]),
    });
    map.set('a', 1).set('b', 2).set('b', 3).set('c', 4);
    expect([...map]).toEqual([
      ['a', 1],
      ['c', 4],
    ]);
    expect(dropped).toEqual([['b', 3]]);
  });
});
