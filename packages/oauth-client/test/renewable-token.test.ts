import { TokenFetchError } from '../src/index.js';
import { RenewableToken } from '../src/renewable-token.js';
import type { AccessToken } from '../src/token-request.js';

const POLICY = {
  tokenRenewBeforeExpired: 60000,
  expiredRefreshRetryDelay: 2000,
  earlyRefreshRetryDelay: 4000,
};
const LIFETIME = 600_000;

/** A token fetch the test settles by hand, counting calls. */
function fakeServer() {
  const calls: { resolve: (t: AccessToken) => void; reject: (e: unknown) => void }[] = [];
  let n = 0;
  return {
    calls,
    fetch: () =>
      new Promise<AccessToken>((resolve, reject) => {
        calls.push({ resolve, reject });
      }),
    /** Settles the latest call with a token that lives LIFETIME from `at`. */
    grant(at: number): AccessToken {
      const token = { value: `token-${++n}`, expiresAt: at + LIFETIME };
      calls[calls.length - 1].resolve(token);
      return token;
    },
    fail(err: unknown = new Error('refused')) {
      calls[calls.length - 1].reject(err);
    },
  };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup() {
  let t = 1_000_000;
  const server = fakeServer();
  const backgroundErrors: unknown[] = [];
  const cache = new RenewableToken({
    ...POLICY,
    clientId: 'api-a-client',
    fetch: server.fetch,
    now: () => t,
    onBackgroundError: (err) => backgroundErrors.push(err),
  });
  return {
    cache,
    server,
    backgroundErrors,
    at: (ms: number) => (t = ms),
    get now() {
      return t;
    },
  };
}

/** A cache holding a token granted at `start` (expires at start + LIFETIME). */
async function warm() {
  const s = setup();
  const start = s.now;
  const first = s.cache.get();
  await flush();
  const token = s.server.grant(start);
  await expect(first).resolves.toBe(token);
  return Object.assign(s, { token, start, expiresAt: start + LIFETIME });
}

describe('RenewableToken', () => {
  it('peek: the token at once when fresh or early (starting one renewal), nothing when cold or expired', async () => {
    const cold = setup();
    expect(cold.cache.peek()).toBeUndefined();
    expect(cold.server.calls).toHaveLength(0);
    const s = await warm();
    expect(s.cache.peek()).toBe(s.token);
    s.at(s.expiresAt - POLICY.tokenRenewBeforeExpired);
    expect(s.cache.peek()).toBe(s.token);
    await flush();
    expect(s.server.calls).toHaveLength(2); // one background renewal
    s.at(s.expiresAt);
    expect(s.cache.peek()).toBeUndefined();
  });

  it('cold: 500 concurrent callers share exactly one request', async () => {
    const s = setup();
    expect(s.cache.state()).toBe('cold');
    const callers = Array.from({ length: 500 }, () => s.cache.get());
    await flush();
    expect(s.server.calls).toHaveLength(1);
    const token = s.server.grant(s.now);
    const got = await Promise.all(callers);
    expect(got.every((t) => t === token)).toBe(true);
    expect(s.cache.state()).toBe('fresh');
    await expect(s.cache.get()).resolves.toBe(token);
    expect(s.server.calls).toHaveLength(1);
  });

  it('fresh: serves the cached token without a request, up to the renewal window', async () => {
    const s = await warm();
    s.at(s.expiresAt - POLICY.tokenRenewBeforeExpired - 1);
    expect(s.cache.state()).toBe('fresh');
    await expect(s.cache.get()).resolves.toBe(s.token);
    expect(s.server.calls).toHaveLength(1);
  });

  it('early window: serves the current token while one background renewal runs', async () => {
    const s = await warm();
    s.at(s.expiresAt - POLICY.tokenRenewBeforeExpired);
    expect(s.cache.state()).toBe('early');
    const during = await Promise.all(Array.from({ length: 500 }, () => s.cache.get()));
    expect(during.every((t) => t === s.token)).toBe(true);
    await flush();
    expect(s.server.calls).toHaveLength(2);
    const renewed = s.server.grant(s.now);
    await flush();
    await expect(s.cache.get()).resolves.toBe(renewed);
    expect(s.cache.state()).toBe('fresh');
    expect(s.server.calls).toHaveLength(2);
  });

  it('early window failure: keeps serving, retries no sooner than earlyRefreshRetryDelay', async () => {
    const s = await warm();
    const windowStart = s.expiresAt - POLICY.tokenRenewBeforeExpired;
    s.at(windowStart);
    await expect(s.cache.get()).resolves.toBe(s.token);
    await flush();
    s.at(windowStart + 100); // the failure is seen 100 ms after the renewal began
    const failure = new Error('token server down');
    s.server.fail(failure);
    await flush();
    expect(s.backgroundErrors).toEqual([failure]);

    s.at(windowStart + 100 + POLICY.earlyRefreshRetryDelay - 1);
    await expect(s.cache.get()).resolves.toBe(s.token);
    await flush();
    expect(s.server.calls).toHaveLength(2); // too soon: no new request

    s.at(windowStart + 100 + POLICY.earlyRefreshRetryDelay);
    await expect(s.cache.get()).resolves.toBe(s.token);
    await flush();
    expect(s.server.calls).toHaveLength(3); // exactly at the delay: one retry
    const renewed = s.server.grant(s.now);
    await flush();
    await expect(s.cache.get()).resolves.toBe(renewed);
  });

  it('expired: callers wait for one shared renewal', async () => {
    const s = await warm();
    s.at(s.expiresAt);
    expect(s.cache.state()).toBe('expired');
    let settled = false;
    const callers = Array.from({ length: 500 }, () => s.cache.get());
    void Promise.all(callers).then(() => (settled = true));
    await flush();
    expect(settled).toBe(false);
    expect(s.server.calls).toHaveLength(2);
    const renewed = s.server.grant(s.now);
    const got = await Promise.all(callers);
    expect(got.every((t) => t === renewed)).toBe(true);
  });

  it('expired failure: every waiting caller fails; no retry before expiredRefreshRetryDelay', async () => {
    const s = await warm();
    s.at(s.expiresAt + 10);
    const callers = Array.from({ length: 3 }, () => s.cache.get());
    await flush();
    s.at(s.expiresAt + 50);
    const failure = new TokenFetchError('unreachable', { clientId: 'api-a-client' });
    s.server.fail(failure);
    for (const c of callers) await expect(c).rejects.toBe(failure);

    s.at(s.expiresAt + 50 + POLICY.expiredRefreshRetryDelay - 1);
    const early = s.cache.get();
    await expect(early).rejects.toBeInstanceOf(TokenFetchError);
    await expect(early).rejects.toMatchObject({ code: 'retry_later', cause: failure });
    await flush();
    expect(s.server.calls).toHaveLength(2);

    s.at(s.expiresAt + 50 + POLICY.expiredRefreshRetryDelay);
    const retry = s.cache.get();
    await flush();
    expect(s.server.calls).toHaveLength(3);
    const renewed = s.server.grant(s.now);
    await expect(retry).resolves.toBe(renewed);
    expect(s.cache.state()).toBe('fresh');
  });

  it('cold failure follows the expired rule, and a success clears the retry delay', async () => {
    const s = setup();
    const first = s.cache.get();
    await flush();
    s.server.fail();
    await expect(first).rejects.toThrow('refused');
    await expect(s.cache.get()).rejects.toMatchObject({ code: 'retry_later' });
    s.at(s.now + POLICY.expiredRefreshRetryDelay);
    const second = s.cache.get();
    await flush();
    s.server.grant(s.now);
    await second;
    // A later expiry starts a renewal at once: the old failure no longer delays it.
    s.at(s.now + LIFETIME);
    void s.cache.get();
    await flush();
    expect(s.server.calls).toHaveLength(3);
  });

  it('a background renewal still running when the token expires is shared by the waiters', async () => {
    const s = await warm();
    s.at(s.expiresAt - 1);
    await expect(s.cache.get()).resolves.toBe(s.token);
    await flush();
    s.at(s.expiresAt + 1);
    const waiting = s.cache.get();
    await flush();
    expect(s.server.calls).toHaveLength(2);
    const renewed = s.server.grant(s.now);
    await expect(waiting).resolves.toBe(renewed);
  });

  it('an early-window failure does not delay the renewal once expired', async () => {
    const s = await warm();
    s.at(s.expiresAt - 10);
    await s.cache.get();
    await flush();
    s.server.fail();
    await flush();
    s.at(s.expiresAt);
    const waiting = s.cache.get();
    await flush();
    expect(s.server.calls).toHaveLength(3);
    const renewed = s.server.grant(s.now);
    await expect(waiting).resolves.toBe(renewed);
  });

  it('a fetch that throws synchronously is a failed renewal, not a stuck one', async () => {
    let calls = 0;
    let t = 0;
    const cache = new RenewableToken({
      ...POLICY,
      clientId: 'x',
      now: () => t,
      fetch: () => {
        calls++;
        throw new Error('boom');
      },
    });
    await expect(cache.get()).rejects.toThrow('boom');
    expect(calls).toBe(1);
    // Not stuck: after the retry delay the next caller sends a new request.
    t = POLICY.expiredRefreshRetryDelay;
    await expect(cache.get()).rejects.toThrow('boom');
    expect(calls).toBe(2);
  });

  it('uses the real clock and tolerates a missing background listener', async () => {
    let n = 0;
    const cache = new RenewableToken({
      ...POLICY,
      tokenRenewBeforeExpired: 1_000_000,
      clientId: 'x',
      fetch: async () => {
        n++;
        if (n === 2) throw new Error('background failure');
        return { value: 't', expiresAt: Date.now() + 600_000 };
      },
    });
    await cache.get();
    expect(cache.state()).toBe('early');
    await cache.get();
    await flush();
    expect(n).toBe(2);
  });
});

describe('RenewableToken.invalidate: a token a downstream refused', () => {
  it('is dropped; the next caller waits for one new token (trigger invalid_token), told to the events', async () => {
    let t = 0;
    let n = 0;
    const told: string[] = [];
    const token = new RenewableToken({
      ...POLICY,
      clientId: 'api-a-client',
      now: () => t,
      fetch: async (trigger) => ({ value: `t-${++n}-${trigger}`, expiresAt: t + LIFETIME }),
      events: {
        tokenRenewed: ({ clientId, trigger, ms }) => told.push(`${clientId} ${trigger} ${ms}`),
      },
    });
    const first = await token.get();
    expect(first.value).toBe('t-1-cold');
    token.invalidate('some-other-token'); // not ours any more: nothing happens
    expect(token.state()).toBe('fresh');
    token.invalidate(first.value);
    expect(token.state()).toBe('cold');
    expect(token.peek()).toBeUndefined();
    const [a, b] = await Promise.all([token.get(), token.get()]);
    expect(a).toBe(b);
    expect(a.value).toBe('t-2-invalid_token');
    token.invalidate(first.value); // a late refusal of the old token: the new one stays
    await expect(token.get()).resolves.toBe(a);
    t = LIFETIME + 1;
    expect((await token.get()).value).toBe('t-3-expired');
    expect(told).toEqual([
      'api-a-client cold 0',
      'api-a-client invalid_token 0',
      'api-a-client expired 0',
    ]);
  });

  it('a refusal lifts the wait after a failed renewal; failures are told with their cause', async () => {
    let t = 0;
    let fail = true;
    const told: string[] = [];
    const token = new RenewableToken({
      ...POLICY,
      clientId: 'c',
      now: () => t,
      initial: { value: 'start', expiresAt: 100 },
      fetch: async () => {
        if (fail) throw new TokenFetchError('timeout', { clientId: 'c' });
        return { value: 'fresh', expiresAt: t + LIFETIME };
      },
      events: {
        tokenRenewalFailed: ({ trigger, cause }) => told.push(`${trigger} ${cause}`),
      },
    });
    t = 200;
    await expect(token.get()).rejects.toMatchObject({ code: 'timeout' });
    await expect(token.get()).rejects.toMatchObject({ code: 'retry_later' });
    fail = false;
    await expect(token.get()).rejects.toMatchObject({ code: 'retry_later' });
    token.invalidate('start');
    await expect(token.get()).resolves.toMatchObject({ value: 'fresh' });
    expect(told).toEqual(['expired timeout']);
  });
});
