import { pointLine } from '@chain/testkit';
import { ClientStats, clientMetrics, createMetrics, type WorkerSnapshot } from '../src/index.js';
import { clientPoints } from '../src/influx-points.js';
import { captureLogger } from './log-capture.js';

const CONTEXT = { serviceId: 'svc', hostname: 'box', ipAddress: '10.1.2.3' };

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
    expect(clientPoints(primary.take(), CONTEXT, 1000).map(pointLine)).toEqual([
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
    metrics.client?.keyFetched({ outcome: 'key' });
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
      { name: 'key_fetch', tags: { outcome: 'key' }, value: 1 },
    ]);
    expect(await metrics.prometheus()).toEqual({
      contentType: 'text/plain',
      body: 'from the primary',
    });
  });
});
