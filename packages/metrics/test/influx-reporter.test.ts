import type { IPoint } from 'influx';
import { InfluxReporter } from '../src/influx-reporter';
import type { MetricsConfig } from '../src/metrics-config';
import { InfluxStub } from './influx-stub';
import { captureLogger } from './log-capture';

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

  function reporterFor(config: MetricsConfig, values: number[] = [1], timeoutMs?: number) {
    const log = captureLogger();
    let n = 0;
    const reporter = new InfluxReporter({
      config,
      logger: log.logger,
      now: () => 1_700_000_000_000 + n,
      collect: (timestamp) => values.map((v) => ({ ...point(v + n++), timestamp })),
      timeoutMs,
    });
    return { reporter, log };
  }

  it('creates the database once, then writes the points with the credentials, in ms', async () => {
    const { reporter, log } = reporterFor(configFor(stub.port));
    await expect(reporter.report()).resolves.toEqual({ written: 1 });
    await expect(reporter.report()).resolves.toEqual({ written: 1 });
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
    await expect(reporter.report()).resolves.toEqual({ written: 0 });
    expect(stub.requests).toEqual([]);
  });

  it('discards and logs once per interval while InfluxDB is down, and resumes when it is back', async () => {
    const port = stub.port;
    await stub.stop();
    const { reporter, log } = reporterFor(configFor(port));
    await expect(reporter.report()).resolves.toEqual({ discarded: 1, reason: 'write-failed' });
    await expect(reporter.report()).resolves.toEqual({ discarded: 1, reason: 'write-failed' });
    const warnings = log.lines().filter((l) => l.level === 40);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({
      msg: 'metrics: cannot report to InfluxDB; interval discarded',
      influxdb: `http://127.0.0.1:${port}/chain_metrics`,
      points: 1,
      reason: expect.stringContaining('ECONNREFUSED'),
    });

    await stub.start(port);
    await expect(reporter.report()).resolves.toEqual({ written: 1 });
    expect(stub.requests.map((r) => r.path)).toEqual(['/query', '/write']);
    expect(stub.writes()).toEqual([
      'svc.request.count,endpoint=/v1/data@get,clientId=c value=3 1700000000002',
    ]);
    expect(
      log
        .lines()
        .filter((l) => l.level === 30)
        .map((l) => l.msg),
    ).toEqual(['metrics: reporting to InfluxDB resumed']);
    expect(log.text()).not.toContain(PASSWORD);
  });

  it('logs refused credentials without the password and keeps trying', async () => {
    stub.mode = 'unauthorized';
    const { reporter, log } = reporterFor(configFor(stub.port));
    await expect(reporter.report()).resolves.toEqual({ discarded: 1, reason: 'write-failed' });
    expect(log.lines()).toEqual([
      expect.objectContaining({
        level: 40,
        reason: 'A 401 Unauthorized error occurred: {"error":"authorization failed"}',
      }),
    ]);
    stub.mode = 'ok';
    await expect(reporter.report()).resolves.toEqual({ written: 1 });
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

  it('defers an interval while the previous write is still pending, losing nothing', async () => {
    const { reporter, log } = reporterFor(configFor(stub.port));
    await reporter.report(); // database created, value 1
    stub.mode = 'hold';
    const slow = reporter.report(); // value 2, held
    await stub.received(3);
    await expect(reporter.report()).resolves.toEqual({ deferred: true });
    expect(log.lines().at(-1)).toMatchObject({
      level: 40,
      msg: 'metrics: previous report to InfluxDB still pending; this interval goes into the next',
    });
    stub.mode = 'ok';
    stub.release();
    await expect(slow).resolves.toEqual({ written: 1 });
    await expect(reporter.report()).resolves.toEqual({ written: 1 });
    // The deferred tick collected nothing: the next report holds it (one collect per write).
    expect(stub.writes().map((w) => /value=(\d+)/.exec(w)?.[1])).toEqual(['1', '2', '3']);
  });

  it('gives up on a write that does not answer within the time-out', async () => {
    const { reporter, log } = reporterFor(configFor(stub.port), [1], 200);
    stub.mode = 'hold';
    const started = Date.now();
    await expect(reporter.report()).resolves.toEqual({ discarded: 1, reason: 'write-failed' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(log.lines()[0].reason).toBe('Request timed out');
    // The next interval is tried again.
    stub.mode = 'ok';
    await expect(reporter.report()).resolves.toEqual({ written: 1 });
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
    await expect(reporter.report()).resolves.toEqual({ discarded: 0, reason: 'collect-failed' });
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
    });
    expect(log.text()).not.toContain(PASSWORD);
  });
});
