import { GiveUp, deferred, waitFor } from '../src/index.js';

describe('waitFor', () => {
  it('resolves with the first value the probe returns other than undefined', async () => {
    let calls = 0;
    const value = await waitFor('three calls', async () => (++calls === 3 ? 'done' : undefined), {
      intervalMs: 1,
    });
    expect({ value, calls }).toEqual({ value: 'done', calls: 3 });
  });

  it('rejects past the time-out, naming what it waited for and the last error', async () => {
    const failing = () => Promise.reject(new Error('connect ECONNREFUSED'));
    await expect(waitFor('the server', failing, { timeoutMs: 20, intervalMs: 5 })).rejects.toThrow(
      /^the server: not within 20 ms: connect ECONNREFUSED$/,
    );
  });

  it('stops at once when the probe gives up', async () => {
    let calls = 0;
    const probe = async () => {
      calls += 1;
      throw new GiveUp('the process exited');
    };
    await expect(waitFor('the health', probe, { timeoutMs: 60_000 })).rejects.toThrow(
      'the health: the process exited',
    );
    expect(calls).toBe(1);
  });
});

describe('deferred', () => {
  it('resolves when the test says so, with the value given', async () => {
    const { promise, resolve } = deferred<number>();
    let settled = false;
    void promise.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    resolve(42);
    await expect(promise).resolves.toBe(42);
  });
});
