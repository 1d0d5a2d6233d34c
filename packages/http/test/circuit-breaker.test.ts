import { CircuitBreaker, type CircuitState } from '../src/circuit-breaker.js';

/** A breaker on an injected clock, with every change of state written down. */
function breaker(errorThreshold = 2, resetTimeoutMs = 7000) {
  let t = 1000;
  const changes: [CircuitState, CircuitState][] = [];
  const b = new CircuitBreaker({
    errorThreshold,
    resetTimeoutMs,
    now: () => t,
    onStateChange: (state, previous) => changes.push([previous, state]),
  });
  return { b, changes, advance: (ms: number) => (t += ms) };
}

describe('CircuitBreaker', () => {
  it("light-4j's defaults: two failures in a row open it; calls are refused for resetTimeout", () => {
    const { b, changes, advance } = breaker();
    expect(b.state).toBe('closed');
    expect(b.acquire()).toBe(true);
    b.failure();
    expect(b.state).toBe('closed');
    expect(b.acquire()).toBe(true);
    b.failure();
    expect(b.state).toBe('open');
    expect(changes).toEqual([['closed', 'open']]);
    expect(b.acquire()).toBe(false);
    expect(b.retryInMs()).toBe(7000);
    advance(6999);
    expect(b.acquire()).toBe(false);
    expect(b.retryInMs()).toBe(1);
  });

  it('a success resets the count: only failures in a row open it', () => {
    const { b } = breaker(3);
    for (const outcome of ['f', 'f', 's', 'f', 'f', 's', 'f', 'f'] as const) {
      expect(b.acquire()).toBe(true);
      if (outcome === 'f') b.failure();
      else b.success();
    }
    expect(b.state).toBe('closed');
    b.acquire();
    b.failure();
    expect(b.state).toBe('open');
  });

  it('after resetTimeout exactly one trial call goes; its success closes the circuit', () => {
    const { b, changes, advance } = breaker();
    b.failure();
    b.failure();
    advance(7000);
    expect(b.retryInMs()).toBe(0);
    expect(b.acquire()).toBe(true); // the trial
    expect(b.state).toBe('half_open');
    expect(b.acquire()).toBe(false); // others, while the trial runs
    expect(b.acquire()).toBe(false);
    b.success();
    expect(b.state).toBe('closed');
    expect(b.acquire()).toBe(true);
    expect(b.acquire()).toBe(true);
    expect(changes).toEqual([
      ['closed', 'open'],
      ['open', 'half_open'],
      ['half_open', 'closed'],
    ]);
  });

  it("the trial's failure opens it again for another full resetTimeout", () => {
    const { b, changes, advance } = breaker(2, 500);
    b.failure();
    b.failure();
    advance(500);
    expect(b.acquire()).toBe(true);
    advance(120); // the trial takes a while, then fails
    b.failure();
    expect(b.state).toBe('open');
    expect(b.retryInMs()).toBe(500);
    advance(499);
    expect(b.acquire()).toBe(false);
    advance(1);
    expect(b.acquire()).toBe(true);
    b.success();
    expect(changes.map(([, to]) => to)).toEqual([
      'open',
      'half_open',
      'open',
      'half_open',
      'closed',
    ]);
  });

  it('errorThreshold 0 turns it off: it never opens', () => {
    const { b, changes } = breaker(0);
    for (let i = 0; i < 50; i++) {
      expect(b.acquire()).toBe(true);
      b.failure();
    }
    expect(b.state).toBe('closed');
    expect(changes).toEqual([]);
  });

  it('a call that was in flight when it opened and then answers closes it (the downstream is back)', () => {
    const { b } = breaker();
    expect(b.acquire()).toBe(true); // a slow call
    b.acquire();
    b.failure();
    b.acquire();
    b.failure();
    expect(b.state).toBe('open');
    b.success(); // the slow call's answer arrives
    expect(b.state).toBe('closed');
    expect(b.retryInMs()).toBe(0);
  });
});
