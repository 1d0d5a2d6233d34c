// What the InfluxDB buffer (metrics.yml bufferIntervals) holds in memory per interval, for the
// series of each of the chain's four services (the mix of calls of test/e2e/metrics.test.ts,
// in every interval):
//
//   pnpm --filter @chain/metrics build && node --expose-gc scripts/bench/buffer-memory.mjs
//
// The intervals are made by the reporter's own parts (IntervalStats and ClientStats drained into
// points by toInfluxPoints) and held by its IntervalBuffer, as during an outage; the heap is
// measured after a full garbage collection, before and after INTERVALS intervals.
import { createRequire } from 'node:module';
import pino from 'pino';

const require = createRequire(import.meta.url);
const { IntervalBuffer } = require('../../packages/metrics/dist/interval-buffer.js');
const { IntervalStats } = require('../../packages/metrics/dist/interval-stats.js');
const { ClientStats, clientMetrics } = require('../../packages/metrics/dist/client-metrics.js');
const { clientPoints, toInfluxPoints } = require('../../packages/metrics/dist/influx-points.js');

if (typeof globalThis.gc !== 'function') {
  process.stderr.write('run with: node --expose-gc scripts/bench/buffer-memory.mjs\n');
  process.exit(2);
}

const INTERVALS = 1000;
/** metrics.yml `bufferIntervals` by default. */
const DEFAULT_BUFFER_INTERVALS = 60;
const HOST = { hostname: 'chain-host-1', ipAddress: '10.0.0.12' };

/** One interval of each service: its requests (series endpoint x client) and its client side. */
const calling = (me, downstream) => (s) => {
  for (let i = 0; i < 3; i++) s.hit('/v1/data@get', 'e2e-client', 200);
  s.client.tokenWaited({ clientId: `${me}-client`, ms: 3, ok: true });
  s.client.tokenRenewed({ clientId: `${me}-client`, trigger: 'early', ms: 12 });
  s.client.circuitChanged({ downstream, state: 'closed', previous: 'closed' });
};
const TRAFFIC = {
  'com.networknt.apia-1.0.0': (s) => {
    calling('api-a', 'api-b')(s);
    s.hit('/v1/data@get', 'e2e-client', 403);
    s.hit('/v1/data@get', 'e2e-client', 403);
    s.hit('/v1/data@get', 'unknown', 401);
    s.hit('unknown', 'unknown', 404);
  },
  'com.networknt.apib-1.0.0': calling('api-b', 'api-c'),
  'com.networknt.apic-1.0.0': calling('api-c', 'api-d'),
  'com.networknt.apid-1.0.0': (s) => {
    for (let i = 0; i < 3; i++) s.hit('/v1/data@get', 'e2e-client', 200);
  },
};

const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};

const rows = [];
// Every buffer stays reachable to the end: none is collected during another's measure.
const kept = [];
for (const [serviceId, traffic] of Object.entries(TRAFFIC)) {
  const context = { serviceId, ...HOST };
  const stats = new IntervalStats();
  const clientStats = new ClientStats();
  const service = {
    hit: (endpoint, clientId, statusCode) => stats.record(endpoint, clientId, statusCode, 2.5),
    client: clientMetrics(clientStats, undefined),
  };
  const buffer = new IntervalBuffer(INTERVALS + 1, pino({ level: 'silent' }), Date.now);
  kept.push(buffer);
  let t = Date.now();
  const interval = () => {
    traffic(service);
    t += 60_000;
    const points = [
      ...toInfluxPoints(stats.drain(), context, t),
      ...clientPoints(clientStats.take(), context, t),
    ];
    buffer.add(t, points);
    return points.length;
  };
  // Every series made and one interval held before the measure.
  interval();
  const before = heap();
  let points = 0;
  for (let i = 0; i < INTERVALS; i++) points = interval();
  const after = heap();
  if (buffer.size !== INTERVALS + 1) throw new Error(`${buffer.size} intervals held`);
  const perInterval = (after - before) / INTERVALS;
  rows.push({
    service: serviceId,
    'points / interval': points,
    'bytes / interval': Math.round(perInterval),
    'bytes / point': Math.round(perInterval / points),
    [`KiB at ${DEFAULT_BUFFER_INTERVALS} intervals`]: Number(
      ((perInterval * DEFAULT_BUFFER_INTERVALS) / 1024).toFixed(1),
    ),
  });
}

const columns = Object.keys(rows[0]);
const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
const line = (cells) =>
  cells
    .map((cell, i) => String(cell).padEnd(widths[i]))
    .join('  ')
    .trimEnd();
const chain = rows.reduce((sum, r) => sum + r['bytes / interval'], 0);
process.stdout.write(
  [
    line(columns),
    ...rows.map((r) => line(columns.map((c) => r[c]))),
    `the four services together: ${chain} bytes per interval (${INTERVALS} intervals each)`,
  ].join('\n') + '\n',
);
