import {
  createMetrics,
  type Metrics,
  type MetricsConfig,
  type PrometheusConfig,
} from '../src/index.js';
import { InfluxStub } from './influx-stub.js';
import { captureLogger } from './log-capture.js';

const SERVICE = 'com.networknt.apia-1.0.0';
const HOST = { hostname: 'box', ipAddress: '10.1.2.3' };

const configFor = (port: number, enabled = true): MetricsConfig => ({
  enabled,
  influxdbProtocol: 'http',
  influxdbHost: '127.0.0.1',
  influxdbPort: port,
  influxdbName: 'metrics',
  reportInMinutes: 1,
  bufferIntervals: 30,
});

/**
 * Metrics on a clock that moves only when a request says so, so response times are exact.
 * `hit` records one finished request as the runtime's metrics stage does.
 */
function metricsFor(config: MetricsConfig, prometheus?: PrometheusConfig) {
  const clock = { t: 1_700_000_000_000 };
  const log = captureLogger();
  const metrics = createMetrics(config, {
    serviceId: SERVICE,
    logger: log.logger,
    now: () => clock.t,
    host: HOST,
    prometheus,
  });
  const hit = (endpoint: string, statusCode: number, ms: number, clientId: unknown = 'unknown') => {
    const startedAt = metrics.now();
    clock.t += ms;
    metrics.record({ endpoint, clientId, statusCode, startedAt });
  };
  return { metrics, hit, log, clock };
}

/** Started, reported and stopped, `built` sent nothing to InfluxDB (`stub`) and logged nothing. */
async function expectNothingWritten(built: ReturnType<typeof metricsFor>, stub: InfluxStub) {
  built.metrics.start();
  await expect(built.metrics.report()).resolves.toEqual({ written: 0, held: 0 });
  await built.metrics.stop();
  expect(stub.requests).toEqual([]);
  expect(built.log.lines()).toEqual([]);
}

/** The line-protocol lines of one series: five counters, then the timer, in both views. */
function series(
  endpoint: string,
  clientId: string,
  counts: number[],
  timer: number[] | undefined,
  at: number,
): string[] {
  const names = ['request', 'success', 'auth_error', 'request_error', 'server_error'];
  const host = 'hostname=box,ipAddress=10.1.2.3';
  const both = (metric: string, value: number) => [
    `${SERVICE}.${metric},endpoint=${endpoint},clientId=${clientId},${host} value=${value} ${at}`,
    `${clientId}.${metric},endpoint=${endpoint},apiName=${SERVICE},${host} value=${value} ${at}`,
  ];
  return [
    ...names.flatMap((name, i) => both(`${name}.count`, counts[i])),
    ...(timer
      ? ['min', 'max', 'mean'].flatMap((suffix, i) => both(`response_time.${suffix}`, timer[i]))
      : []),
  ];
}

describe('createMetrics', () => {
  let stub: InfluxStub;
  let metrics: Metrics | undefined;
  beforeEach(async () => {
    stub = new InfluxStub();
    await stub.start();
  });
  afterEach(async () => {
    await metrics?.stop();
    metrics = undefined;
    await stub.stop();
  });

  it('counts every outcome per endpoint and client, writes the interval, then starts from zero', async () => {
    const built = metricsFor(configFor(stub.port));
    metrics = built.metrics;
    const { hit } = built;
    hit('/v1/data@get', 200, 4, 'client-1');
    hit('/v1/data@get', 302, 8, 'client-1');
    hit('/v1/data@get', 401, 1);
    hit('/v1/data@get', 403, 3, 'client-1');
    hit('/v1/data@get', 400, 2);
    hit('/v1/data@get', 500, 6);
    hit('unknown', 404, 0);

    await expect(built.metrics.report()).resolves.toEqual({ written: 48, held: 0 });
    const at = 1_700_000_000_024; // the clock after 4+8+1+3+2+6 ms
    expect(stub.writes()).toEqual([
      [
        ...series('/v1/data@get', 'client-1', [3, 2, 1, 0, 0], [3, 8, 5], at),
        ...series('/v1/data@get', 'unknown', [3, 0, 1, 1, 1], [1, 6, 3], at),
        ...series('unknown', 'unknown', [1, 0, 0, 1, 0], [0, 0, 0], at),
      ].join('\n'),
    ]);

    // The next interval starts from zero: the same series, zero counts, no timer.
    built.clock.t += 1000;
    await expect(built.metrics.report()).resolves.toEqual({ written: 30, held: 0 });
    expect(stub.writes()[1]).toBe(
      [
        ...series('/v1/data@get', 'client-1', [0, 0, 0, 0, 0], undefined, at + 1000),
        ...series('/v1/data@get', 'unknown', [0, 0, 0, 0, 0], undefined, at + 1000),
        ...series('unknown', 'unknown', [0, 0, 0, 0, 0], undefined, at + 1000),
      ].join('\n'),
    );
    expect(built.log.text()).not.toMatch(/"level":[45]0/);
  });

  it('serves the same figures to Prometheus, labelled by endpoint and client, never reset', async () => {
    const built = metricsFor(configFor(stub.port));
    metrics = built.metrics;
    const { hit } = built;
    hit('/v1/data@get', 200, 4, 'client-1');
    hit('/v1/data@get', 200, 20, 'client-1');
    hit('/v1/data@get', 401, 1);
    hit('/v1/data@get', 403, 3, 'client-1');
    hit('/v1/data@get', 500, 6);
    hit('unknown', 404, 0);
    await built.metrics.report(); // resets the interval, not Prometheus

    const res = await built.metrics.prometheus();
    expect(res.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = res.body;
    const samples = text
      .split('\n')
      .filter((l) => /^(requests|success|auth_error|request_error|server_error)_total\{/.test(l));
    expect(samples).toEqual([
      'requests_total{endpoint="/v1/data@get",clientId="client-1"} 3',
      'requests_total{endpoint="/v1/data@get",clientId="unknown"} 2',
      'requests_total{endpoint="unknown",clientId="unknown"} 1',
      'success_total{endpoint="/v1/data@get",clientId="client-1"} 2',
      'auth_error_total{endpoint="/v1/data@get",clientId="unknown"} 1',
      'auth_error_total{endpoint="/v1/data@get",clientId="client-1"} 1',
      'request_error_total{endpoint="unknown",clientId="unknown"} 1',
      'server_error_total{endpoint="/v1/data@get",clientId="unknown"} 1',
    ]);
    expect(text).toContain('# TYPE response_time_seconds histogram');
    expect(text).toContain(
      'response_time_seconds_bucket{le="0.005",endpoint="/v1/data@get",clientId="client-1"} 2',
    );
    expect(text).toContain(
      'response_time_seconds_bucket{le="0.025",endpoint="/v1/data@get",clientId="client-1"} 3',
    );
    expect(text).toContain(
      'response_time_seconds_sum{endpoint="/v1/data@get",clientId="client-1"} 0.027',
    );
    expect(text).toContain(
      'response_time_seconds_count{endpoint="/v1/data@get",clientId="client-1"} 3',
    );
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
  });

  it('keeps a registry per app, so two apps in one process count apart', async () => {
    const one = metricsFor(configFor(stub.port));
    const two = metricsFor(configFor(stub.port));
    one.hit('/v1/data@get', 200, 1);
    const { body: text } = await two.metrics.prometheus();
    expect(text).toContain('# TYPE requests_total counter');
    expect(text).not.toMatch(/^requests_total\{/m);
    await one.metrics.stop();
    await two.metrics.stop();
  });

  it('costs requests nothing while InfluxDB is down: answers, counts, holds the intervals, says it once', async () => {
    const port = stub.port;
    await stub.stop();
    const built = metricsFor(configFor(port));
    metrics = built.metrics;
    built.metrics.start();
    built.hit('/v1/data@get', 200, 2, 'client-1');
    const first = built.clock.t;
    await expect(built.metrics.report()).resolves.toEqual({ written: 0, held: 1 });
    built.hit('/v1/data@get', 200, 2, 'client-1');
    built.hit('/v1/data@get', 200, 2, 'client-1');
    await expect(built.metrics.report()).resolves.toEqual({ written: 0, held: 2 });
    const warnings = built.log.lines().filter((l) => (l.level as number) >= 40);
    expect(warnings.map((w) => w.msg)).toEqual([
      'metrics: cannot report to InfluxDB; up to 30 intervals are held and written when it answers',
    ]);

    // Back: both intervals in one write, each with its own timestamp and counts, then the new one.
    await stub.start(port);
    built.clock.t += 10;
    // 16 points each for the two held intervals (counters and timer), 10 for the new one (no timer).
    await expect(built.metrics.report()).resolves.toEqual({ written: 42, held: 0 });
    expect(stub.writes()).toHaveLength(1);
    const requestCounts = stub
      .lines()
      .filter((l) => l.startsWith(`${SERVICE}.request.count`))
      .map((l) => l.replace(/^.* value=/, ''));
    expect(requestCounts).toEqual([`1 ${first}`, `2 ${first + 4}`, `0 ${first + 14}`]);
    expect(built.log.lines().at(-1)).toMatchObject({
      level: 30,
      msg: 'metrics: reporting to InfluxDB resumed; 2 intervals written late, 0 dropped',
      influxdb: `http://127.0.0.1:${port}/metrics`,
    });
  });

  it('keeps counting while a write to InfluxDB hangs', async () => {
    const built = metricsFor(configFor(stub.port));
    metrics = built.metrics;
    built.hit('/v1/data@get', 200, 1);
    stub.mode = 'hold';
    const hanging = built.metrics.report();
    await stub.received(1); // the write (its /query first) is held by InfluxDB
    for (let i = 0; i < 20; i++) built.hit('/v1/data@get', 200, 1);
    expect(stub.requests.map((r) => r.path)).toEqual(['/query']); // still held
    stub.mode = 'ok';
    stub.release();
    await expect(hanging).resolves.toEqual({ written: 16, held: 0 });
    await expect(built.metrics.report()).resolves.toEqual({ written: 16, held: 0 });
    expect(stub.writes().map((w) => /value=(\d+)/.exec(w)?.[1])).toEqual(['1', '20']);
  });

  it('never tags with an empty or non-string client id', async () => {
    const built = metricsFor(configFor(stub.port));
    metrics = built.metrics;
    for (const id of ['', 42, undefined, null, 'c 1,x=y']) built.hit('/v1/data@get', 200, 0, id);
    await expect(metrics.report()).resolves.toEqual({ written: 48, held: 0 });
    const measurements = stub
      .writes()[0]
      .split('\n')
      .filter((l) => l.includes('.request.count'))
      .map((l) => l.replace(/ value=(\d+) \d+$/, ' $1'));
    expect(measurements).toEqual([
      `${SERVICE}.request.count,endpoint=/v1/data@get,clientId=unknown,hostname=box,ipAddress=10.1.2.3 3`,
      `unknown.request.count,endpoint=/v1/data@get,apiName=${SERVICE},hostname=box,ipAddress=10.1.2.3 3`,
      `${SERVICE}.request.count,endpoint=/v1/data@get,clientId=42,hostname=box,ipAddress=10.1.2.3 1`,
      `42.request.count,endpoint=/v1/data@get,apiName=${SERVICE},hostname=box,ipAddress=10.1.2.3 1`,
      `${SERVICE}.request.count,endpoint=/v1/data@get,clientId=c\\ 1\\,x\\=y,hostname=box,ipAddress=10.1.2.3 1`,
      `c\\ 1\\,x=y.request.count,endpoint=/v1/data@get,apiName=${SERVICE},hostname=box,ipAddress=10.1.2.3 1`,
    ]);
  });

  it('counts nothing and says it is disabled when disabled', async () => {
    const built = metricsFor(configFor(stub.port, false));
    expect(built.metrics.enabled).toBe(false);
    built.hit('/v1/data@get', 200, 1);
    await expect(built.metrics.prometheus()).resolves.toEqual({
      contentType: 'text/plain',
      body: '',
    });
    await expectNothingWritten(built, stub);
  });

  describe('prometheus.yml: /metrics on its own switch', () => {
    it('serves /metrics without InfluxDB, and never tries to write to it', async () => {
      const built = metricsFor(configFor(stub.port, false), {
        enabled: true,
        enableHotspot: false,
      });
      expect(built.metrics.enabled).toBe(true);
      built.hit('/v1/data@get', 200, 1);
      const { body: text } = await built.metrics.prometheus();
      expect(text).toContain('requests_total{endpoint="/v1/data@get",clientId="unknown"} 1');
      // no process metrics without enableHotspot
      expect(text).not.toContain('process_cpu');
      await expectNothingWritten(built, stub);
    });

    it('adds the process metrics with enableHotspot', async () => {
      const built = metricsFor(configFor(stub.port, false), { enabled: true, enableHotspot: true });
      expect((await built.metrics.prometheus()).body).toContain('process_cpu');
    });

    it('reports to InfluxDB with /metrics off', async () => {
      const built = metricsFor(configFor(stub.port, true), {
        enabled: false,
        enableHotspot: false,
      });
      metrics = built.metrics;
      built.hit('/v1/data@get', 200, 1);
      await expect(built.metrics.prometheus()).resolves.toEqual({
        contentType: 'text/plain',
        body: '',
      });
      await expect(built.metrics.report()).resolves.toMatchObject({ written: 16 });
    });
  });
});
