import express, { type Express } from 'express';
import request from 'supertest';
import { createMetrics, type Metrics, type MetricsConfig, type PrometheusConfig } from '../src';
import { InfluxStub } from './influx-stub';
import { captureLogger } from './log-capture';

const SERVICE = 'com.networknt.apia-1.0.0';
const HOST = { hostname: 'box', ipAddress: '10.1.2.3' };

const configFor = (port: number, enabled = true): MetricsConfig => ({
  enabled,
  influxdbProtocol: 'http',
  influxdbHost: '127.0.0.1',
  influxdbPort: port,
  influxdbName: 'metrics',
  reportInMinutes: 1,
});

/**
 * An app shaped like the service pipeline: metrics first, then the probes, then handlers that
 * answer each outcome. The clock moves only when a handler says so, so response times are exact.
 */
function appFor(config: MetricsConfig, prometheus?: PrometheusConfig) {
  const clock = { t: 1_700_000_000_000 };
  const log = captureLogger();
  const metrics = createMetrics(config, {
    serviceId: SERVICE,
    logger: log.logger,
    endpointOf: (req, res) => (res.locals.endpoint as string | undefined) ?? 'unknown',
    clientIdOf: (_req, res) =>
      (res.locals.auth as { clientId?: string } | undefined)?.clientId ?? 'unknown',
    now: () => clock.t,
    host: HOST,
    prometheus,
  });
  const app = express();
  app.use(metrics.middleware);
  app.get('/health', (_req, res) => void res.json({ status: 'UP' }));
  app.get('/metrics', metrics.prometheus);
  app.use('/v1/:name', (req, res, next) => {
    res.locals.endpoint = `/v1/${req.params.name}@get`;
    const client = req.header('x-test-client');
    if (client) res.locals.auth = { clientId: client };
    const status = Number(req.header('x-test-status') ?? 200);
    clock.t += Number(req.header('x-test-ms') ?? 0);
    if (status === 500) {
      next(new Error('boom'));
      return;
    }
    res.status(status).json({ status });
  });
  app.use((_req: express.Request, res: express.Response) => void res.status(404).json({}));
  app.use(
    (_err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) =>
      void res.status(500).json({}),
  );
  return { app, metrics, log, clock };
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

const call = (app: Express, path: string, status: number, ms: number, client?: string) => {
  const r = request(app)
    .get(path)
    .set('x-test-status', String(status))
    .set('x-test-ms', String(ms));
  return client ? r.set('x-test-client', client) : r;
};

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
    const built = appFor(configFor(stub.port));
    metrics = built.metrics;
    const { app } = built;
    await call(app, '/v1/data', 200, 4, 'client-1').expect(200);
    await call(app, '/v1/data', 302, 8, 'client-1').expect(302);
    await call(app, '/v1/data', 401, 1).expect(401);
    await call(app, '/v1/data', 403, 3, 'client-1').expect(403);
    await call(app, '/v1/data', 400, 2).expect(400);
    await call(app, '/v1/data', 500, 6).expect(500);
    await request(app).get('/nowhere').expect(404);
    await request(app).get('/health').expect(200);
    await request(app).get('/metrics').expect(200);

    await expect(built.metrics.report()).resolves.toEqual({ written: 48 });
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
    await expect(built.metrics.report()).resolves.toEqual({ written: 30 });
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
    const built = appFor(configFor(stub.port));
    metrics = built.metrics;
    const { app } = built;
    await call(app, '/v1/data', 200, 4, 'client-1').expect(200);
    await call(app, '/v1/data', 200, 20, 'client-1').expect(200);
    await call(app, '/v1/data', 401, 1).expect(401);
    await call(app, '/v1/data', 403, 3, 'client-1').expect(403);
    await call(app, '/v1/data', 500, 6).expect(500);
    await request(app).get('/nowhere').expect(404);
    await built.metrics.report(); // resets the interval, not Prometheus

    const res = await request(app).get('/metrics').expect(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const samples = res.text
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
    expect(res.text).toContain('# TYPE response_time_seconds histogram');
    expect(res.text).toContain(
      'response_time_seconds_bucket{le="0.005",endpoint="/v1/data@get",clientId="client-1"} 2',
    );
    expect(res.text).toContain(
      'response_time_seconds_bucket{le="0.025",endpoint="/v1/data@get",clientId="client-1"} 3',
    );
    expect(res.text).toContain(
      'response_time_seconds_sum{endpoint="/v1/data@get",clientId="client-1"} 0.027',
    );
    expect(res.text).toContain(
      'response_time_seconds_count{endpoint="/v1/data@get",clientId="client-1"} 3',
    );
    expect(res.text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(res.text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
  });

  it('keeps a registry per app, so two apps in one process count apart', async () => {
    const one = appFor(configFor(stub.port));
    const two = appFor(configFor(stub.port));
    await call(one.app, '/v1/data', 200, 1).expect(200);
    const text = (await request(two.app).get('/metrics').expect(200)).text;
    expect(text).toContain('# TYPE requests_total counter');
    expect(text).not.toMatch(/^requests_total\{/m);
    await one.metrics.stop();
    await two.metrics.stop();
  });

  it('costs requests nothing while InfluxDB is down: answers, counts, and logs once per interval', async () => {
    const port = stub.port;
    await stub.stop();
    const built = appFor(configFor(port));
    metrics = built.metrics;
    built.metrics.start();
    await call(built.app, '/v1/data', 200, 2, 'client-1').expect(200);
    await expect(built.metrics.report()).resolves.toEqual({
      discarded: 16,
      reason: 'write-failed',
    });
    await call(built.app, '/v1/data', 200, 2, 'client-1').expect(200);
    await expect(built.metrics.report()).resolves.toEqual({
      discarded: 16,
      reason: 'write-failed',
    });
    const warnings = built.log.lines().filter((l) => l.level === 40);
    expect(warnings.map((w) => w.msg)).toEqual([
      'metrics: cannot report to InfluxDB; interval discarded',
      'metrics: cannot report to InfluxDB; interval discarded',
    ]);
  });

  it('answers requests while a write to InfluxDB hangs', async () => {
    const built = appFor(configFor(stub.port));
    metrics = built.metrics;
    await call(built.app, '/v1/data', 200, 1).expect(200);
    stub.mode = 'hold';
    const hanging = built.metrics.report();
    const started = Date.now();
    for (let i = 0; i < 20; i++) await call(built.app, '/v1/data', 200, 1).expect(200);
    expect(Date.now() - started).toBeLessThan(900); // well inside the 1 s write time-out
    expect(stub.requests.map((r) => r.path)).toEqual(['/query']); // still held
    stub.mode = 'ok';
    stub.release();
    await expect(hanging).resolves.toEqual({ written: 16 });
    await expect(built.metrics.report()).resolves.toEqual({ written: 16 });
    expect(stub.writes().map((w) => /value=(\d+)/.exec(w)?.[1])).toEqual(['1', '20']);
  });

  it('never tags with an empty or non-string client id', async () => {
    const log = captureLogger();
    const ids: unknown[] = ['', 42, undefined, null, 'c 1,x=y'];
    let i = 0;
    metrics = createMetrics(configFor(stub.port), {
      serviceId: SERVICE,
      logger: log.logger,
      endpointOf: () => '/v1/data@get',
      clientIdOf: () => ids[i++] as string,
      host: HOST,
    });
    const app = express();
    app.use(metrics.middleware);
    app.get('/v1/data', (_req, res) => void res.json([]));
    for (const _ of ids) await request(app).get('/v1/data').expect(200);
    await expect(metrics.report()).resolves.toEqual({ written: 48 });
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

  it('counts nothing and leaves /metrics to the next handler when disabled', async () => {
    const built = appFor(configFor(stub.port, false));
    await call(built.app, '/v1/data', 200, 1).expect(200);
    await request(built.app).get('/metrics').expect(404);
    built.metrics.start();
    await expect(built.metrics.report()).resolves.toEqual({ written: 0 });
    await built.metrics.stop();
    expect(stub.requests).toEqual([]);
    expect(built.log.lines()).toEqual([]);
  });

  describe('prometheus.yml: /metrics on its own switch', () => {
    it('serves /metrics without InfluxDB, and never tries to write to it', async () => {
      const built = appFor(configFor(stub.port, false), { enabled: true, enableHotspot: false });
      await call(built.app, '/v1/data', 200, 1).expect(200);
      const text = (await request(built.app).get('/metrics').expect(200)).text;
      expect(text).toContain('requests_total{endpoint="/v1/data@get",clientId="unknown"} 1');
      // no process metrics without enableHotspot
      expect(text).not.toContain('process_cpu');
      built.metrics.start();
      await expect(built.metrics.report()).resolves.toEqual({ written: 0 });
      await built.metrics.stop();
      expect(stub.requests).toEqual([]);
      expect(built.log.lines()).toEqual([]);
    });

    it('adds the process metrics with enableHotspot', async () => {
      const built = appFor(configFor(stub.port, false), { enabled: true, enableHotspot: true });
      expect((await request(built.app).get('/metrics').expect(200)).text).toContain('process_cpu');
    });

    it('reports to InfluxDB with /metrics off', async () => {
      const built = appFor(configFor(stub.port, true), { enabled: false, enableHotspot: false });
      await call(built.app, '/v1/data', 200, 1).expect(200);
      await request(built.app).get('/metrics').expect(404);
      await expect(built.metrics.report()).resolves.toMatchObject({ written: 16 });
    });
  });
});
