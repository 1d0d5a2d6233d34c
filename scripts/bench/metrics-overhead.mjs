#!/usr/bin/env node
// What metrics cost a request while InfluxDB is down. api-d (built: `pnpm build`) runs
// twice on loopback: metrics off, and metrics on pointing at a dead InfluxDB port, reporting every
// 200 ms so writes keep failing during the load. autocannon, in its own process, loads
// GET /v1/data of each in alternating rounds (drift hits both alike). Prints latency per mode and
// the on/off ratio. A third process, metrics off again, is the control: its ratio to the first
// shows how much two identical processes differ on this machine (the noise floor). Exits non-zero when a request failed, the reporter did not really try (and
// fail) to write, or the InfluxDB password showed in a log line.
//
//   node scripts/bench/metrics-overhead.mjs [--quick] [--duration S] [--connections N]
//                                           [--rounds N] [--json FILE]
// (--json: the row contract of scripts/bench/README.md.)
import '../lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import './lib/temp-root.mjs'; // first: every temporary folder under one, removed at exit
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { CERTS, ROOT, freePort, runToExit, serverYml, serviceEntry } from '@chain/testkit';
import { readOptions } from './lib/args.mjs';
import { startBenchService } from './lib/chain.mjs';
import { subBenchOptions, subBenchUsage } from './lib/options.mjs';
import { checkPrerequisites } from './lib/paths.mjs';
import { readCpuMs, readRss } from './lib/proc-stats.mjs';
import { median } from './lib/report.mjs';

const {
  values: { duration: durationS, connections, rounds, json: jsonFile },
} = readOptions(
  subBenchOptions({ durationS: 2, connections: 10, rounds: 7 }),
  subBenchUsage('metrics-overhead.mjs'),
);
const AUTOCANNON = createRequire(path.join(ROOT, 'package.json')).resolve(
  'autocannon/autocannon.js',
);
const PASSWORD = 'bench-secret-never-logged';

/** One autocannon run in its own process; resolves with its JSON result. */
async function load(port, seconds) {
  const { code, stdout, stderr } = await runToExit(AUTOCANNON, {
    args: [
      '-j',
      '-n',
      '-c',
      String(connections),
      '-d',
      String(seconds),
      `https://localhost:${port}/v1/data`,
    ],
    env: { NODE_EXTRA_CA_CERTS: path.join(CERTS, 'ca.crt') },
    timeoutMs: (seconds + 60) * 1000,
  });
  if (code !== 0) throw new Error(`autocannon exited with ${code}: ${stderr.slice(-2000)}`);
  return JSON.parse(stdout);
}

function startApiD(name, metricsYml) {
  return startBenchService(
    name,
    { 'server.yml': serverYml('com.networknt.apid-1.0.0'), 'metrics.yml': metricsYml },
    { script: serviceEntry('api-d') },
  );
}

checkPrerequisites(['api-d']);
const deadPort = await freePort(); // released: nothing listens there
const off = await startApiD('metrics off', 'enabled: false\n');
const control = await startApiD('control: metrics off again', 'enabled: false\n');
const on = await startApiD(
  'metrics on, InfluxDB down',
  [
    'enabled: true',
    'influxdbHost: 127.0.0.1',
    `influxdbPort: ${deadPort}`,
    'influxdbName: bench',
    'influxdbUser: bench',
    `influxdbPass: ${PASSWORD}`,
    'reportInMinutes: 1',
    'reportIntervalMs: 200\n',
  ].join('\n'),
);
/** Per mode, one entry per round: autocannon's result and the CPU the service used meanwhile. */
const runs = new Map([
  [off, []],
  [control, []],
  [on, []],
]);
const peakMb = new Map();
try {
  // Warm both up (JIT, TLS sessions), then alternate the order round by round.
  for (const service of runs.keys()) await load(service.port, 1);
  for (let round = 0; round < rounds; round++) {
    const order = [off, control, on];
    for (let k = 0; k < order.length; k++) {
      const service = order[(k + round) % order.length];
      const before = readCpuMs(service.pid);
      const result = await load(service.port, durationS);
      runs.get(service).push({ result, cpuMs: readCpuMs(service.pid) - before });
    }
  }
  for (const service of runs.keys()) peakMb.set(service, readRss(service.pid)?.hwmMb ?? null);
} finally {
  await Promise.all([...runs.keys()].map((service) => service.stop()));
}

const round3 = (x) => Number(x.toFixed(3));
const cpuPer1k = ({ result, cpuMs }) => (cpuMs * 1000) / result.requests.total;
const summary = (service) => {
  const rs = runs.get(service);
  return {
    requests: rs.reduce((n, r) => n + r.result.requests.total, 0),
    failed: rs.reduce((n, r) => n + r.result.errors + r.result.timeouts + r.result.non2xx, 0),
    meanMs: round3(median(rs.map((r) => r.result.latency.average))),
    p50: median(rs.map((r) => r.result.latency.p50)),
    p99: median(rs.map((r) => r.result.latency.p99)),
    rps: Math.round(median(rs.map((r) => r.result.requests.average))),
    // CPU the service spent per 1000 requests: steadier than latency on a shared machine.
    cpuMsPer1k: Number(median(rs.map(cpuPer1k)).toFixed(1)),
    rssMb: peakMb.get(service) === null ? null : Number(peakMb.get(service).toFixed(1)),
  };
};
/** Median over the rounds of x/off, each round's runs back to back: drift cancels. */
const pairedRatio = (service, figure) =>
  round3(median(runs.get(service).map((r, i) => figure(r) / figure(runs.get(off)[i]))));
const ratiosOf = (service) => ({
  meanLatency: pairedRatio(service, (r) => r.result.latency.average),
  p99: pairedRatio(service, (r) => r.result.latency.p99),
  rps: pairedRatio(service, (r) => r.result.requests.average),
  cpuPerRequest: pairedRatio(service, cpuPer1k),
});
const a = summary(off);
const c = summary(control);
const b = summary(on);
const ratios = ratiosOf(on);
const noise = ratiosOf(control);
const failedReports = on.lines.filter((l) => l.includes('cannot report to InfluxDB')).length;
const leaked = [...runs.keys()].some((service) => service.lines.some((l) => l.includes(PASSWORD)));

console.log(
  `GET /v1/data on api-d: ${rounds} round(s) of ${durationS} s per mode, ${connections} connections; medians of the rounds`,
);
console.table({ [off.name]: a, [control.name]: c, [on.name]: b });
const describe = (r) =>
  `mean latency ${r.meanLatency}, p99 ${r.p99}, rps ${r.rps}, CPU per request ${r.cpuPerRequest}`;
console.log(
  `ratio on/off (median of the rounds' pairs): ${describe(ratios)}\nnoise floor, control/off: ${describe(noise)}`,
);
console.log(
  `failed InfluxDB reports logged by the metrics-on service: ${failedReports}; password in a log line: ${leaked}`,
);

if (jsonFile) {
  const rows = [
    { case: 'metrics off', ...a, baseline: null, ratio: null },
    {
      case: 'control: metrics off again',
      ...c,
      baseline: 'metrics off',
      ratio: noise.meanLatency,
      metric: 'mean latency',
      ratios: noise,
    },
    {
      case: 'metrics on, InfluxDB down',
      ...b,
      baseline: 'metrics off',
      ratio: ratios.meanLatency,
      metric: 'mean latency',
      ratios,
      failedReports,
    },
  ];
  fs.writeFileSync(jsonFile, JSON.stringify(rows, null, 2));
}

const problems = [];
const failed = a.failed + b.failed + c.failed;
if (failed) problems.push(`${failed} request(s) failed`);
if (failedReports === 0) problems.push('the reporter never tried (and failed) to write');
if (leaked) problems.push('the InfluxDB password appeared in a log line');
if (problems.length) {
  console.error(`FAIL: ${problems.join('; ')}`);
  process.exit(1);
}
