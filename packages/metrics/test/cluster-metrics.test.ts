import { pointLine } from '@chain/testkit';
import { ClientStats, clientMetrics, createMetrics, type WorkerSnapshot } from '../src';
import { IntervalStats } from '../src/interval-stats';
import { captureLogger } from './log-capture';

const CONTEXT = { serviceId: 'svc', hostname: 'box', ipAddress: '10.1.2.3' };

describe('IntervalStats.merge: the workers of one service added up', () => {
  it('sums the counts, takes the min of the mins and the max of the maxes, weights the means', () => {
    const one = new IntervalStats();
    one.record('/v1/data@get', 'c1', 200, 2);
    one.record('/v1/data@get', 'c1', 200, 4);
    one.record('/v1/data@get', 'c1', 401, 6);
    const two = new IntervalStats();
    two.record('/v1/data@get', 'c1', 200, 12);
    two.record('unknown', 'unknown', 404, 1);
    const primary = new IntervalStats();
    primary.merge(one.drain());
    primary.merge(two.drain());
    expect(primary.drain()).toEqual([
      {
        endpoint: '/v1/data@get',
        clientId: 'c1',
        counts: { request: 4, success: 3, auth_error: 1, request_error: 0, server_error: 0 },
        responseTime: { count: 4, min: 2, max: 12, mean: 6 },
      },
      {
        endpoint: 'unknown',
        clientId: 'unknown',
        counts: { request: 1, success: 0, auth_error: 0, request_error: 1, server_error: 0 },
        responseTime: { count: 1, min: 1, max: 1, mean: 1 },
      },
    ]);
    // A series seen once is reported with zeros afterwards; an interval without requests adds none.
    primary.merge(one.drain());
    expect(primary.drain()).toEqual([
      expect.objectContaining({
        endpoint: '/v1/data@get',
        counts: expect.objectContaining({ request: 0 }),
      }),
      expect.objectContaining({
        endpoint: 'unknown',
        counts: expect.objectContaining({ request: 0 }),
      }),
    ]);
  });
});

describe('ClientStats take and merge', () => {
  it('hands an interval over as plain data and adds the workers up into the same points', () => {
    const [w1, w2, primary] = [new ClientStats(), new ClientStats(), new ClientStats()];
    const m1 = clientMetrics(w1, undefined);
    const m2 = clientMetrics(w2, undefined);
    m1.tokenRenewed({ clientId: 'c', trigger: 'cold', ms: 5 });
    m2.tokenRenewed({ clientId: 'c', trigger: 'cold', ms: 5 });
    m1.tokenWaited({ clientId: 'c', ms: 10, ok: true });
    m2.tokenWaited({ clientId: 'c', ms: 30, ok: true });
    m2.tokenWaited({ clientId: 'c', ms: 20, ok: true });
    m1.circuitChanged({ downstream: 'b', state: 'open', previous: 'closed' });
    m2.circuitChanged({ downstream: 'b', state: 'half_open', previous: 'open' });
    const snapshots = [w1.take(), w2.take()];
    // What crosses the IPC channel is JSON.
    for (const s of snapshots) primary.merge(JSON.parse(JSON.stringify(s)));
    const host = 'hostname=box,ipAddress=10.1.2.3';
    expect(primary.drain(CONTEXT, 1000).map(pointLine)).toEqual([
      `svc.token_renewal.count clientId=c,trigger=cold,${host} 2`,
      `svc.token_wait.count clientId=c,outcome=ok,${host} 3`,
      `svc.circuit_open.count downstream=b,${host} 1`,
      `svc.token_wait_time.min clientId=c,${host} 10`,
      `svc.token_wait_time.max clientId=c,${host} 30`,
      `svc.token_wait_time.mean clientId=c,${host} 20`,
      `svc.circuit_state downstream=b,${host} 1`,
    ]);
    // take() reset the workers: counters at zero, timers empty, the gauge kept.
    expect(w1.take()).toEqual({
      counters: [
        { name: 'token_renewal', tags: { clientId: 'c', trigger: 'cold' }, value: 0 },
        { name: 'token_wait', tags: { clientId: 'c', outcome: 'ok' }, value: 0 },
        { name: 'circuit_open', tags: { downstream: 'b' }, value: 0 },
      ],
      timers: [],
      gauges: [{ name: 'circuit_state', tags: { downstream: 'b' }, value: 2 }],
    });
  });
});

describe('createMetrics in a worker (a WorkerLink)', () => {
  it('hands each interval and the last one to the link instead of InfluxDB, and asks it for /metrics', async () => {
    const sent: WorkerSnapshot[] = [];
    const { logger } = captureLogger();
    const metrics = createMetrics(
      {
        enabled: true,
        influxdbProtocol: 'http',
        influxdbHost: '127.0.0.1',
        influxdbPort: 9,
        influxdbName: 'm',
        reportInMinutes: 1,
        bufferIntervals: 30,
        reportIntervalMs: 3_600_000,
      } as never,
      {
        serviceId: 'svc',
        logger,
        prometheus: { enabled: true, enableHotspot: false },
        worker: {
          send: async (snapshot) => {
            sent.push(snapshot);
          },
          prometheus: async () => ({ contentType: 'text/plain', body: 'from the primary' }),
        },
      },
    );
    metrics.start();
    metrics.record({
      endpoint: '/e@get',
      clientId: 'c',
      statusCode: 200,
      startedAt: metrics.now(),
    });
    metrics.client?.keyFetched({ outcome: 'ok' });
    await metrics.stop();
    expect(sent).toHaveLength(1);
    expect(sent[0].series).toEqual([
      expect.objectContaining({
        endpoint: '/e@get',
        clientId: 'c',
        counts: expect.objectContaining({ request: 1, success: 1 }),
      }),
    ]);
    expect(sent[0].client.counters).toEqual([
      { name: 'key_fetch', tags: { outcome: 'ok' }, value: 1 },
    ]);
    expect(await metrics.prometheus()).toEqual({
      contentType: 'text/plain',
      body: 'from the primary',
    });
  });
});
