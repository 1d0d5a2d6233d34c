import { pointLine } from '@chain/testkit';
import { ClientStats, clientMetrics, createMetrics } from '../src/index.js';
import { clientPoints } from '../src/influx-points.js';
import { captureLogger } from './log-capture.js';

const CONTEXT = { serviceId: 'com.networknt.apia-1.0.0', hostname: 'box', ipAddress: '10.1.2.3' };

describe('client metrics in InfluxDB (light-4j naming, service view)', () => {
  it('counters .count, the token wait timer .min .max .mean (ms), the circuit_state gauge', () => {
    const stats = new ClientStats();
    const m = clientMetrics(stats, undefined);
    m.tokenRenewed({ clientId: 'api-a-client', trigger: 'cold', ms: 12 });
    m.tokenRenewed({ clientId: 'api-a-client', trigger: 'cold', ms: 9 });
    m.tokenRenewalFailed({ clientId: 'api-a-client', trigger: 'expired', cause: 'unreachable' });
    m.tokenWaited({ clientId: 'api-a-client', ms: 10, ok: true });
    m.tokenWaited({ clientId: 'api-a-client', ms: 30, ok: false });
    m.keyFetched({ outcome: 'no_such_kid' });
    m.circuitChanged({ downstream: 'api-b', state: 'open', previous: 'closed' });
    m.circuitRejected({ downstream: 'api-b' });
    m.circuitRejected({ downstream: 'api-b' });
    m.downstreamRetried({ downstream: 'api-b', reason: 'stale_connection' });
    const first = clientPoints(stats.take(), CONTEXT, 1000).map(pointLine);
    const host = 'hostname=box,ipAddress=10.1.2.3';
    expect(first).toEqual([
      `com.networknt.apia-1.0.0.token_renewal.count clientId=api-a-client,trigger=cold,${host} 2`,
      `com.networknt.apia-1.0.0.token_renewal_error.count clientId=api-a-client,trigger=expired,cause=unreachable,${host} 1`,
      `com.networknt.apia-1.0.0.token_wait.count clientId=api-a-client,outcome=ok,${host} 1`,
      `com.networknt.apia-1.0.0.token_wait.count clientId=api-a-client,outcome=timeout,${host} 1`,
      `com.networknt.apia-1.0.0.key_fetch.count outcome=no_such_kid,${host} 1`,
      `com.networknt.apia-1.0.0.circuit_open.count downstream=api-b,${host} 1`,
      `com.networknt.apia-1.0.0.circuit_rejected.count downstream=api-b,${host} 2`,
      `com.networknt.apia-1.0.0.downstream_retry.count downstream=api-b,reason=stale_connection,${host} 1`,
      `com.networknt.apia-1.0.0.token_wait_time.min clientId=api-a-client,${host} 10`,
      `com.networknt.apia-1.0.0.token_wait_time.max clientId=api-a-client,${host} 30`,
      `com.networknt.apia-1.0.0.token_wait_time.mean clientId=api-a-client,${host} 20`,
      `com.networknt.apia-1.0.0.circuit_state downstream=api-b,${host} 2`,
    ]);
    // The next interval: counters start again from zero (series kept), no timer, the gauge stays.
    m.circuitChanged({ downstream: 'api-b', state: 'half_open', previous: 'open' });
    const second = clientPoints(stats.take(), CONTEXT, 2000).map(pointLine);
    expect(second.filter((l) => !l.endsWith(' 0'))).toEqual([
      `com.networknt.apia-1.0.0.circuit_state downstream=api-b,${host} 1`,
    ]);
    expect(second).toHaveLength(9);
  });

  it('nothing counted when metrics are off: the client side reports to nothing', () => {
    const metrics = createMetrics(
      {
        enabled: false,
        influxdbProtocol: 'http',
        influxdbHost: 'localhost',
        influxdbPort: 8086,
        influxdbName: 'metrics',
        reportInMinutes: 1,
        bufferIntervals: 30,
      },
      { serviceId: 's', logger: captureLogger().logger },
    );
    expect(metrics.client).toBeUndefined();
  });

  it('Prometheus: the same figures, never reset', async () => {
    const metrics = createMetrics(
      {
        enabled: false,
        influxdbProtocol: 'http',
        influxdbHost: 'localhost',
        influxdbPort: 8086,
        influxdbName: 'metrics',
        reportInMinutes: 1,
        bufferIntervals: 30,
      },
      {
        serviceId: 's',
        logger: captureLogger().logger,
        prometheus: { enabled: true, enableHotspot: false },
      },
    );
    const m = metrics.client!;
    m.tokenRenewed({ clientId: 'c', trigger: 'early', ms: 1 });
    m.tokenRenewalFailed({ clientId: 'c', trigger: 'early', cause: 'timeout' });
    m.tokenWaited({ clientId: 'c', ms: 250, ok: true });
    m.keyFetched({ outcome: 'key' });
    m.circuitChanged({ downstream: 'd', state: 'open', previous: 'closed' });
    m.circuitRejected({ downstream: 'd' });
    m.downstreamRetried({ downstream: 'd', reason: 'invalid_token' });
    const text = (await metrics.prometheus()).body;
    for (const line of [
      'token_renewals_total{clientId="c",trigger="early"} 1',
      'token_renewal_errors_total{clientId="c",trigger="early",cause="timeout"} 1',
      'token_waits_total{clientId="c",outcome="ok"} 1',
      'token_wait_seconds_sum{clientId="c"} 0.25',
      'key_fetches_total{outcome="key"} 1',
      'circuit_opened_total{downstream="d"} 1',
      'circuit_rejected_total{downstream="d"} 1',
      'circuit_state{downstream="d"} 2',
      'downstream_retries_total{downstream="d",reason="invalid_token"} 1',
    ]) {
      expect(text).toContain(line);
    }
  });
});
