import { ConfigLoader } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { configDir } from '@chain/testkit';
import { limitConfigSchema } from '../../src/limits/limit-config.js';
import { memoryCounter } from '../../src/limits/rate-limit.js';

const load = (yaml: string) => {
  const loader = new ConfigLoader({ bundledDir: configDir({ 'limit.yml': yaml }), env: {} });
  return { config: loader.load('limit', limitConfigSchema), warnings: loader.warnings };
};
const failure = (yaml: string) => {
  try {
    load(yaml);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
};
const SECOND = { limit: 1, windowMs: 1000, text: '1/s' };

describe('limit.yml', () => {
  it('light-4j defaults: off, key server, 10/s 10000/d, 429, no shedding', () => {
    const { config } = load('{}');
    expect(config).toMatchObject({ enabled: false, key: 'server', errorCode: 429 });
    expect(config.rateLimit).toEqual([
      { limit: 10, windowMs: 1000, text: '10/s' },
      { limit: 10000, windowMs: 86_400_000, text: '10000/d' },
    ]);
    expect(config.overload).toEqual({
      maxEventLoopDelay: 0,
      maxHeapUsedBytes: 0,
      maxRssBytes: 0,
      maxInFlight: 0,
      retryAfter: 10,
      sampleInterval: 1000,
    });
  });

  it('the old concurrentRequest alone is N/s; queueSize is read and said to be ignored', () => {
    const { config, warnings } = load('concurrentRequest: 2\nqueueSize: 5\n');
    expect(config.rateLimit).toEqual([{ limit: 2, windowMs: 1000, text: '2/s' }]);
    expect(warnings).toEqual([
      expect.objectContaining({ key: 'queueSize', message: expect.stringMatching(/ignored/) }),
    ]);
  });

  it("light-4j's maps as YAML or JSON text, by key and by path prefix", () => {
    const { config } = load(
      `key: client\nclient: '{"c1":"100/m 10000/d","c2":{"/v1/address":"20/s"}}'\nserver: {"/v1":"5/h"}\n`,
    );
    expect(config.client.c1).toHaveLength(2);
    expect(config.client.c2).toEqual({
      '/v1/address': [{ limit: 20, windowMs: 1000, text: '20/s' }],
    });
    expect(config.server['/v1']).toEqual([{ limit: 5, windowMs: 3_600_000, text: '5/h' }]);
  });

  it.each([
    ['rateLimit: 10/w\n', 'rateLimit', /"10\/w" is not a rate/],
    ['key: tenant\n', 'key', /server|address|client|user/],
    ['errorCode: 500\n', 'errorCode', /./],
    ['redis: localhost:6379\n', 'redis', /redis:\/\//],
    ['overload:\n  maxEventLoopDely: 5\n', 'overload', /maxEventLoopDely/],
  ])('%j: refused at start naming the file and key', (yaml, key, message) => {
    const err = failure(yaml);
    expect(err.file).toMatch(/limit\.yml$/);
    expect(err.key ?? '').toContain(key);
    expect(err.message).toMatch(message);
  });
});

describe('memoryCounter (GCRA)', () => {
  it('a burst of the limit, then one per window / limit; a refused request books nothing', () => {
    let now = 10_000;
    const take = memoryCounter(10, () => now);
    const quotas = [SECOND, { limit: 2, windowMs: 60_000, text: '2/m' }];
    expect(take('a', quotas)).toEqual({ ok: true, limit: 1, remaining: 0, resetMs: 1000 });
    now += 400;
    expect(take('a', quotas)).toEqual({ ok: false, limit: 1, remaining: 0, resetMs: 600 });
    expect(take('b', quotas).ok).toBe(true);
    now += 600;
    expect(take('a', quotas)).toEqual({ ok: true, limit: 1, remaining: 0, resetMs: 1000 });
    now += 1000;
    // The minute's two are booked until 70 s: the next fits 28 s later (one per 30 s).
    expect(take('a', quotas)).toEqual({ ok: false, limit: 2, remaining: 0, resetMs: 28_000 });
    now += 28_000;
    expect(take('a', quotas).ok).toBe(true);
  });

  it('spreads admissions under a sustained overload: 10/s is one per 100 ms after the burst', () => {
    let now = 0;
    const take = memoryCounter(10, () => now);
    const tenPerSecond = [{ limit: 10, windowMs: 1000, text: '10/s' }];
    const admitted: number[] = [];
    for (now = 0; now < 2000; now += 10) if (take('k', tenPerSecond).ok) admitted.push(now);
    expect(admitted.slice(0, 10)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
    expect(admitted.slice(10, 13)).toEqual([100, 200, 300]);
    expect(admitted).toHaveLength(29);
  });

  it('holds at most maxKeys: a new key forgets the oldest', () => {
    const take = memoryCounter(1, () => 0);
    expect(take('a', [SECOND]).ok).toBe(true);
    expect(take('b', [SECOND]).ok).toBe(true);
    expect(take('a', [SECOND]).ok).toBe(true);
  });
});
