import type { IPoint } from 'influx';
import { InfluxReporter } from '../src/influx-reporter.js';
import type { MetricsConfig } from '../src/metrics-config.js';
import { InfluxStub } from './influx-stub.js';
import { captureLogger } from './log-capture.js';

const PASSWORD = 'pa55-w0rd-never-logged';

const configFor = (port: number, extra: Partial<MetricsConfig> = {}): MetricsConfig => ({
  enabled: true,
  influxdbProtocol: 'http',
  influxdbHost: '127.0.0.1',
  influxdbPort: port,
  influxdbName: 'chain_metrics',
  influxdbUser: 'writer',
  influxdbPass: PASSWORD,
  reportInMinutes: 1,
  bufferIntervals: 30,
  ...extra,
});

const point = (value: number): IPoint => ({
  measurement: 'svc.request.count',
  tags: { endpoint: '/v1/data@get', clientId: 'c' },
  fields: { value },
});

describe('InfluxReporter', () => {
  let stub: InfluxStub;
  beforeEach(async () => {
    stub = new InfluxStub();
    await stub.start();
  });
  afterEach(() => stub.stop());

  /**
   * A reporter whose n-th interval (from 0) has one point per value, each `value + n`, at
   * 1_700_000_000_000 + n: the value and the timestamp of a line say which interval it is.
   */
  function reporterFor(
    config: MetricsConfig,
    values: number[] = [1],
    extra: { timeoutMs?: number; batchPoints?: number } = {},
  ) {
    const log = captureLogger();
    let n = 0;
    const reporter = new InfluxReporter({
      config,
      logger: log.logger,
      now: () => 1_700_000_000_000 + n,
      collect: () => values.map((v) => point(v + n++)),
      ...extra,
    });
    return { reporter, log };
  }

  /** The value and timestamp of every line written, in order. */
  const written = () => stub.lines().map((l) => l.replace(/^.* value=/, ''));

  it('creates the database once, then writes the points with the credentials, in ms', async () => {
    const { reporter, log } = reporterFor(configFor(stub.port));
    await expect(reporter.report()).resolves.toEqual({ written: 1, held: 0 });
    await expect(reporter.report()).resolves.toEqual({ written: 1, held: 0 });
    const auth = `Basic ${Buffer.from(`writer:${PASSWORD}`).toString('base64')}`;
    // Each on a connection of its own: no idle kept-alive socket for a later report to find closed.
    expect(stub.requests.map((r) => [r.method, r.path, r.authorization, r.connection])).toEqual([
      ['POST', '/query', auth, 'close'],
      ['POST', '/write', auth, 'close'],
      ['POST', '/write', auth, 'close'],
    ]);
    expect(stub.requests[0].query.get('q')).toBe('create database "chain_metrics"');
    expect(stub.requests[1].query.get('db')).toBe('chain_metrics');
    expect(stub.requests[1].query.get('precision')).toBe('ms');
    expect(stub.writes()).toEqual([
      'svc.request.count,endpoint=/v1/data@get,clientId=c value=1 1700000000000',
      'svc.request.count,endpoint=/v1/data@get,clientId=c value=2 1700000000001',
    ]);
    expect(log.text()).not.toContain(PASSWORD);
  });

  it('writes nothing for an empty interval', async () => {
    const { reporter } = reporterFor(configFor(stub.port), []);
    await expect(reporter.report()).resolves.toEqual({ written: 0, held: 0 });
    expect(stub.requests).toEqual([]);
  });

  it('holds the intervals while InfluxDB is down, says it once, and writes them late in one write', async () => {
    const port = stub.port;
    await stub.stop();
    const { reporter, log } = reporterFor(configFor(port));
    await expect(reporter.report()).resolves.toEqual({ written: 0, held: 1 });
    await expect(reporter.report()).resolves.toEqual({ written: 0, held: 2 });
    const said = log.lines().filter((l) => (l.level as number) >= 30);
    expect(said).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'metrics: cannot report to InfluxDB; up to 30 intervals are held and written when it answers',
        influxdb: `http://127.0.0.1:${port}/chain_metrics`,
        held: 1,
        reason: expect.stringContaining('ECONNREFUSED'),
      }),
    ]);

    await stub.start(port);
    await expect(reporter.report()).resolves.toEqual({ written: 3, held: 0 });
    expect(stub.requests.map((r) => r.path)).toEqual(['/query', '/write']);
    // Oldest first, each with its own timestamp, in ms.
    expect(stub.requests[1].query.get('precision')).toBe('ms');
    expect(written()).toEqual(['1 1700000000000', '2 1700000000001', '3 1700000000002']);
    expect(log.lines().at(-1)).toMatchObject({
      level: 30,
      msg: 'metrics: reporting to InfluxDB resumed; 2 intervals written late, 0 dropped',
      late: 2,
      dropped: 0,
    });
    expect(log.text()).not.toContain(PASSWORD);
  });

  it('drops the oldest past bufferIntervals, says it once, and counts them when InfluxDB is back', async () => {
    const port = stub.port;
    await stub.stop();
    const { reporter, log } = reporterFor(configFor(port, { bufferIntervals: 2 }));
    for (let i = 0; i < 5; i++) await reporter.report();
    expect(
      log
        .lines()
        .filter((l) => l.level === 40)
        .map((l) => l.msg),
    ).toEqual([
      'metrics: cannot report to InfluxDB; up to 2 intervals are held and written when it answers',
      'metrics: 2 intervals held, the most metrics.yml bufferIntervals allows; the oldest are dropped until InfluxDB answers',
    ]);
    await stub.start(port);
    await expect(reporter.report()).resolves.toEqual({ written: 2, held: 0 });
    // Intervals 0-3 were dropped; 4 was held, 5 is on time.
    expect(written()).toEqual(['5 1700000000004', '6 1700000000005']);
    expect(log.lines().at(-1)).toMatchObject({
      msg: 'metrics: reporting to InfluxDB resumed; 1 interval written late, 4 dropped',
    });
  });

  it('writes a long backlog in batches of whole intervals, oldest first; a failure mid-way keeps the order', async () => {
    const port = stub.port;
    await stub.stop();
    // Two points an interval, at most five points a write: two intervals a write.
    const { reporter, log } = reporterFor(configFor(port), [10, 20], { batchPoints: 5 });
    for (let i = 0; i < 4; i++) await reporter.report();
    await stub.start(port);
    // The first batch is taken, the second fails (InfluxDB times out inside): the flush stops.
    stub.nextWrites.push('ok', 'timeout');
    await expect(reporter.report()).resolves.toEqual({ written: 4, held: 3 });
    expect(log.lines().at(-1)).toMatchObject({
      level: 20,
      msg: 'metrics: InfluxDB still not answering',
      reason: 'Internal Server Error',
    });
    await expect(reporter.report()).resolves.toEqual({ written: 8, held: 0 });
    const writes = stub.writes().map((w) => w.split('\n').map((l) => l.replace(/^.* value=/, '')));
    const pair = (i: number) => [
      `${10 + 2 * i} ${1700000000000 + 2 * i}`,
      `${21 + 2 * i} ${1700000000000 + 2 * i}`,
    ];
    expect(writes).toEqual([
      [...pair(0), ...pair(1)],
      [...pair(2), ...pair(3)], // answered 500: not taken
      [...pair(2), ...pair(3)],
      [...pair(4), ...pair(5)],
    ]);
    // No interval InfluxDB took was sent again.
    expect(log.lines().at(-1)).toMatchObject({
      msg: 'metrics: reporting to InfluxDB resumed; 5 intervals written late, 0 dropped',
    });
  });

  it('stamps every point with its interval, in whole and ever increasing milliseconds', async () => {
    const log = captureLogger();
    const reporter = new InfluxReporter({
      config: configFor(stub.port),
      logger: log.logger,
      now: () => 1_700_000_000_000.75, // a clock that stands still, with a fraction
      collect: () => [
        point(1),
        { ...point(2), timestamp: 5 },
        { ...point(3), timestamp: undefined },
      ],
    });
    await reporter.report();
    await reporter.report();
    expect(written()).toEqual([
      '1 1700000000000',
      '2 1700000000000',
      '3 1700000000000',
      '1 1700000000001',
      '2 1700000000001',
      '3 1700000000001',
    ]);
  });

  it('logs refused credentials without the password, holds the interval and keeps trying', async () => {
    stub.mode = 'unauthorized';
    const { reporter, log } = reporterFor(configFor(stub.port));
    await expect(reporter.report()).resolves.toEqual({ written: 0, held: 1 });
    expect(log.lines()).toEqual([
      expect.objectContaining({
        level: 40,
        reason: 'A 401 Unauthorized error occurred: {"error":"authorization failed"}',
      }),
    ]);
    stub.mode = 'ok';
    await expect(reporter.report()).resolves.toEqual({ written: 2, held: 0 });
    expect(stub.requests.map((r) => r.path)).toEqual(['/query', '/query', '/write']);
    expect(log.text()).not.toContain(PASSWORD);
    expect(log.text()).not.toContain(Buffer.from(`writer:${PASSWORD}`).toString('base64'));
  });

  it('masks the password should InfluxDB echo it', async () => {
    const { reporter, log } = reporterFor(configFor(stub.port, { influxdbPass: 'authorization' }));
    stub.mode = 'unauthorized';
    await reporter.report();
    expect(log.lines()[0].reason).toBe(
      'A 401 Unauthorized error occurred: {"error":"**** failed"}',
    );
  });

  it('lets go of points InfluxDB refuses (400), and goes on with the next intervals', async () => {
    const { reporter, log } = reporterFor(configFor(stub.port));
    await reporter.report(); // database created, interval 0 written
    stub.nextWrites.push('bad-request');
    await expect(reporter.report()).resolves.toEqual({ written: 0, held: 0 });
    expect(log.lines().at(-1)).toMatchObject({
      level: 40,
      msg: 'metrics: InfluxDB refused the points; 1 interval discarded',
      reason:
        'A 400 Bad Request error occurred: {"error":"partial write: points beyond retention policy dropped=1"}',
    });
    await expect(reporter.report()).resolves.toEqual({ written: 1, held: 0 });
    expect(written()).toEqual(['1 1700000000000', '2 1700000000001', '3 1700000000002']);
  });

  it('writes an interval that ends while a write is pending with that same flush, at its own time', async () => {
    const { reporter, log } = reporterFor(configFor(stub.port));
    await reporter.report(); // database created, interval 0
    stub.mode = 'hold';
    const slow = reporter.report(); // interval 1, held by InfluxDB
    await stub.received(2, '/write');
    const next = reporter.report(); // interval 2 waits in the buffer
    expect(next).toBe(slow);
    stub.mode = 'ok';
    stub.release();
    await expect(slow).resolves.toEqual({ written: 2, held: 0 });
    expect(stub.writes().map((w) => w.replace(/^.* value=/, ''))).toEqual([
      '1 1700000000000',
      '2 1700000000001',
      '3 1700000000002',
    ]);
    expect(log.lines().filter((l) => (l.level as number) >= 40)).toEqual([]);
  });

  it('gives up on a write that does not answer within the time-out, and sends it again (InfluxDB keeps one)', async () => {
    const { reporter, log } = reporterFor(configFor(stub.port), [1], { timeoutMs: 200 });
    await reporter.report(); // database created, interval 0
    stub.mode = 'hold';
    const started = Date.now();
    await expect(reporter.report()).resolves.toEqual({ written: 0, held: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(log.lines().at(-1)).toMatchObject({ level: 40, reason: 'Request timed out' });
    // The timed-out write may have been taken: it is sent again as it was, byte for byte.
    stub.mode = 'ok';
    await expect(reporter.report()).resolves.toEqual({ written: 2, held: 0 });
    const [, timedOut, again] = stub.writes();
    expect(again.split('\n')[0]).toBe(timedOut);
    expect(written()).toEqual([
      '1 1700000000000',
      '2 1700000000001',
      '2 1700000000001',
      '3 1700000000002',
    ]);
  });

  it('logs an interval it cannot collect instead of throwing from the timer', async () => {
    const log = captureLogger();
    const reporter = new InfluxReporter({
      config: configFor(stub.port),
      logger: log.logger,
      now: () => 1,
      collect: () => {
        throw new Error('bad point');
      },
    });
    await expect(reporter.report()).resolves.toEqual({ written: 0, held: 0 });
    expect(log.lines()).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'metrics: cannot collect the interval; interval discarded',
        reason: 'bad point',
      }),
    ]);
    expect(stub.requests).toEqual([]);
  });

  it('reports on its schedule and flushes the last interval on stop', async () => {
    const { reporter, log } = reporterFor(configFor(stub.port, { reportIntervalMs: 20 }));
    expect(reporter.intervalMs).toBe(20);
    reporter.start();
    reporter.start(); // idempotent
    expect(reporter.running).toBe(true);
    await stub.received(2, '/write');
    await reporter.stop();
    expect(reporter.running).toBe(false); // nothing scheduled after stop
    await reporter.stop(); // idempotent
    expect(log.lines()[0]).toMatchObject({
      level: 30,
      msg: 'metrics: reporting to InfluxDB',
      influxdb: `http://127.0.0.1:${stub.port}/chain_metrics`,
      user: 'writer',
      intervalMs: 20,
      bufferIntervals: 30,
    });
    expect(log.text()).not.toContain(PASSWORD);
    // Every interval written once, in order, the last one included.
    const values = written().map((w) => Number(w.split(' ')[0]));
    expect(values).toEqual(values.map((_, i) => i + 1));
  });

  describe('stop', () => {
    it('writes what is held when InfluxDB answers within the flush time', async () => {
      const port = stub.port;
      await stub.stop();
      const { reporter, log } = reporterFor(configFor(port));
      reporter.start();
      await reporter.report();
      await reporter.report();
      const stopped = reporter.stop(5_000);
      // It tries again while InfluxDB is still down (a debug line each time) ...
      await waitFor(() => log.lines().filter((l) => l.level === 20).length >= 2);
      // ... and writes everything, the last interval included, once InfluxDB answers.
      await stub.start(port);
      await stopped;
      expect(written()).toEqual(['1 1700000000000', '2 1700000000001', '3 1700000000002']);
      expect(log.lines().at(-1)).toMatchObject({
        msg: 'metrics: reporting to InfluxDB resumed; 3 intervals written late, 0 dropped',
      });
    });

    it('says what is lost when InfluxDB does not answer within the flush time', async () => {
      const port = stub.port;
      await stub.stop();
      const { reporter, log } = reporterFor(configFor(port));
      reporter.start();
      await reporter.report();
      const started = Date.now();
      await reporter.stop(600);
      expect(Date.now() - started).toBeGreaterThanOrEqual(550);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(log.lines().at(-1)).toMatchObject({
        level: 40,
        msg: 'metrics: InfluxDB did not answer before the service stopped; 2 intervals not written',
        notWritten: 2,
      });
    });

    it('ends a write still in flight when the flush time is up', async () => {
      const { reporter, log } = reporterFor(configFor(stub.port)); // a write time-out of 10 s
      reporter.start();
      await reporter.report(); // database created
      stub.mode = 'hold';
      const pending = reporter.report();
      await stub.received(2, '/write');
      const started = Date.now();
      await reporter.stop(300);
      expect(Date.now() - started).toBeLessThan(2_000);
      await expect(pending).resolves.toEqual({ written: 0, held: 1 });
      expect(log.lines().at(-1)).toMatchObject({
        msg: 'metrics: InfluxDB did not answer before the service stopped; 2 intervals not written',
      });
    });
  });
});

/** Polls a condition a test cannot be told of (a log line), 5 s at most. */
async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`not in time: ${condition.toString()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
