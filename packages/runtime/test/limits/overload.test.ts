import { EventEmitter } from 'node:events';
import { StatusError } from '@chain/errors';
import { createMetrics } from '@chain/metrics';
import { captureLogger } from '../support.js';
import type { Exchange } from '../../src/exchange.js';
import { overloadStage } from '../../src/limits/overload.js';

const metrics = createMetrics(
  { enabled: false } as never,
  {
    serviceId: 't',
    logger: captureLogger().logger,
    prometheus: { enabled: false, enableHotspot: false },
  } as never,
);
const exchange = () => ({ res: new EventEmitter() }) as unknown as Exchange;
const settings = {
  maxEventLoopDelay: 0,
  maxHeapUsedBytes: 0,
  maxRssBytes: 0,
  maxInFlight: 2,
  retryAfter: 3,
  sampleInterval: 60_000,
};

describe('overload maxInFlight', () => {
  it('past the requests in progress, 503 ERR20015 with Retry-After; a finished one makes room', () => {
    const stage = overloadStage(settings, metrics, captureLogger().logger)!;
    const [a, b] = [exchange(), exchange()];
    expect(stage(a)).toBeUndefined();
    expect(stage(b)).toBeUndefined();
    let refused: unknown;
    try {
      void stage(exchange());
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(StatusError);
    expect((refused as StatusError).body.code).toBe('ERR20015');
    expect((refused as StatusError).headers).toEqual({ 'Retry-After': '3' });
    a.res.emit('close');
    expect(stage(exchange())).toBeUndefined();
  });

  it('no bound set: no stage at all', () => {
    expect(
      overloadStage({ ...settings, maxInFlight: 0 }, metrics, captureLogger().logger),
    ).toBeUndefined();
  });
});

describe('overload sampling', () => {
  it('past maxHeapUsedBytes: refused from the next sample on, said once in a warn line; under it again, said once', async () => {
    const log = captureLogger();
    const bounds = { ...settings, maxInFlight: 0, sampleInterval: 10 };
    const stage = overloadStage({ ...bounds, maxHeapUsedBytes: 1 }, metrics, log.logger)!;
    await vi.waitFor(() =>
      expect(log.lines().some((l) => String(l.msg).startsWith('overloaded'))).toBe(true),
    );
    expect(() => stage(exchange())).toThrow(StatusError);
    const warned = log.lines().filter((l) => String(l.msg).startsWith('overloaded'));
    expect(warned).toHaveLength(1);
    expect(warned[0].msg).toMatch(
      /^overloaded, shedding requests: heap used \d+ bytes \(maxHeapUsedBytes 1\)$/,
    );
    // A new stage replaces the sampler: a bound no process reaches is never past.
    const relaxed = overloadStage({ ...bounds, maxRssBytes: 2 ** 50 }, metrics, log.logger)!;
    expect(relaxed(exchange())).toBeUndefined();
  });
});
