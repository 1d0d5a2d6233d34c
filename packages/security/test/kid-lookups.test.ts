import { LOOKUP_BURST, LOOKUP_INTERVAL_MS, MAX_KIDS } from '../src/key-policy.js';
import { LookupBudget } from '../src/kid-lookups.js';

/** As the key store does: a kid looked up waits no more. */
function lookups(budget: LookupBudget) {
  return (kid: string, at: number) => {
    const chosen = budget.take(kid, at);
    if (chosen) budget.forget(chosen);
    return chosen;
  };
}

/** A budget whose LOOKUP_BURST free look-ups at `at` are spent. */
function spent(at = 0) {
  const budget = new LookupBudget(at);
  for (let i = 0; i < LOOKUP_BURST; i++) lookups(budget)(`spent-${i}`, at);
  return budget;
}

describe('LookupBudget', () => {
  it('gives LOOKUP_BURST look-ups at once, then one per LOOKUP_INTERVAL_MS', () => {
    const take = lookups(new LookupBudget(0));
    const burst = Array.from({ length: LOOKUP_BURST }, (_v, i) => take(`k${i}`, 0));
    expect(burst).toEqual(Array.from({ length: LOOKUP_BURST }, (_v, i) => `k${i}`));
    expect(take('c', 0)).toBeUndefined();
    expect(take('c', LOOKUP_INTERVAL_MS - 1)).toBeUndefined();
    expect(take('c', LOOKUP_INTERVAL_MS)).toBe('c');
    // never more than LOOKUP_BURST saved up
    const later = 100 * LOOKUP_INTERVAL_MS;
    const saved = Array.from({ length: LOOKUP_BURST + 1 }, (_v, i) => take(`s${i}`, later));
    expect(saved.filter(Boolean)).toHaveLength(LOOKUP_BURST);
  });

  it('gives a free look-up to the kid asked for most, the asker on a tie', () => {
    const budget = spent();
    for (const kid of ['x1', 'real', 'x2', 'real', 'x3'])
      expect(budget.take(kid, 10)).toBeUndefined();
    expect(budget.take('x4', LOOKUP_INTERVAL_MS)).toBe('real');
    budget.forget('real');
    // all asked once: the asker goes first
    expect(budget.take('x5', 2 * LOOKUP_INTERVAL_MS)).toBe('x5');
  });

  it('counts the asks of this minute: the counts start again every minute', () => {
    const budget = spent();
    budget.take('old', 1);
    budget.take('old', 2);
    // `old` was asked twice, but in the minute before: the asker wins
    expect(budget.take('new', 60_000)).toBe('new');
    // within the minute the counts hold
    budget.take('again', 60_001);
    budget.take('again', 60_002);
    expect(budget.take('other', 60_000 + LOOKUP_INTERVAL_MS)).toBe('again');
  });

  it('makes room by dropping the oldest kid asked for once, else the oldest', () => {
    const budget = spent();
    budget.take('twice', 1);
    budget.take('twice', 1);
    for (let i = 0; i < MAX_KIDS; i++) budget.take(`once-${i}`, 1);
    // `twice` kept its count through the flood of kids asked once
    expect(budget.take('asker', LOOKUP_INTERVAL_MS)).toBe('twice');
    budget.forget('twice');
    // every kid asked twice: the oldest (t0) makes room for `newest`
    const full = spent();
    for (let i = 0; i < MAX_KIDS; i++) full.take(`t${i}`, 1);
    for (let i = 0; i < MAX_KIDS; i++) full.take(`t${i}`, 1);
    full.take('newest', 2);
    // t0 starts again at one ask (kept, it would hold three and win the next look-up)
    full.take('t0', 2);
    expect(full.take('asker', LOOKUP_INTERVAL_MS)).toBe('t1');
  });
});
