import { ASKED_WINDOW_MS, LookupBudget } from '../src/lookup-budget';

describe('LookupBudget', () => {
  it('gives `burst` look-ups at once, then one per interval', () => {
    const budget = new LookupBudget(2, 1000, 100, 0);
    // as the key store does: a kid looked up waits no more
    const take = (kid: string, at: number) => {
      const chosen = budget.take(kid, at);
      if (chosen) budget.forget(chosen);
      return chosen;
    };
    expect(take('a', 0)).toBe('a');
    expect(take('b', 0)).toBe('b');
    expect(take('c', 0)).toBeUndefined();
    expect(take('c', 999)).toBeUndefined();
    expect(take('c', 1000)).toBe('c');
    // never more than `burst` saved up
    expect([5000, 5000, 5000].map((t, i) => take(`k${i}`, t))).toEqual(['k0', 'k1', undefined]);
  });

  it('gives a free look-up to the kid asked for most, the asker on a tie', () => {
    const budget = new LookupBudget(1, 1000, 100, 0);
    expect(budget.take('first', 0)).toBe('first');
    budget.forget('first');
    for (const kid of ['x1', 'real', 'x2', 'real', 'x3'])
      expect(budget.take(kid, 10)).toBeUndefined();
    expect(budget.take('x4', 1000)).toBe('real');
    budget.forget('real');
    // all asked once: the asker goes first
    expect(budget.take('x5', 2000)).toBe('x5');
    expect(budget.waiting).toBe(5);
  });

  it('forgets kids not asked for within the window', () => {
    const budget = new LookupBudget(1, 1000, 100, 0);
    budget.take('a', 0);
    budget.take('old', 1);
    budget.take('old', 2);
    // `old` was asked twice, but a minute ago: it drops out and the asker wins
    expect(budget.take('new', 2 + ASKED_WINDOW_MS + 1)).toBe('new');
    expect(budget.waiting).toBe(1);
  });

  it('makes room by dropping the oldest kid asked once, else the oldest', () => {
    const budget = new LookupBudget(0, 1000, 3, 0);
    budget.take('twice', 0);
    budget.take('twice', 0);
    budget.take('once-1', 0);
    budget.take('once-2', 0);
    budget.take('new', 0);
    expect(budget.waiting).toBe(3);
    // `twice` kept its count: it wins the next free look-up
    const roomy = new LookupBudget(1, 1000, 3, 0);
    roomy.take('a', 0);
    for (const kid of ['t1', 't1', 't2', 't2', 't3', 't3', 'n']) roomy.take(kid, 0);
    // t1 (asked twice, oldest) made room for n; n (asked once) makes room for x
    expect(roomy.waiting).toBe(3);
    expect(roomy.take('x', 1000)).toBe('t2');
  });
});
