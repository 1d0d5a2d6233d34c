#!/usr/bin/env node
// What exporting spans costs a request. Two hops, api-c calling api-d (built: `pnpm build`),
// run three times on loopback: telemetry off; off again (the control, the noise floor of two
// identical systems); and on, each hop exporting its server span (and api-c its client span)
// over OTLP/HTTP JSON to a collector stand-in in this process that accepts and counts them.
// autocannon, in its own process, loads GET /v1/data of each api-c in rotating rounds.
// Prints requests per second, latency and CPU per request (both hops) per mode, and the on/off
// ratios; exits non-zero when a request failed or the spans did not all reach the collector.
//
//   node scripts/bench/telemetry-overhead.mjs [--quick] [--duration S] [--connections N]
//                                             [--rounds N] [--json FILE]
// (--json: the row contract of scripts/bench/README.md.)
import '../lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import './lib/temp-root.mjs'; // first: every temporary folder under one, removed at exit
import fs from 'node:fs';
import http from 'node:http';
import { serverYml, serviceEntry } from '@chain/testkit';
import { readOptions } from './lib/args.mjs';
import { autocannon } from './lib/autocannon.mjs';
import { startBenchService } from './lib/chain.mjs';
import { subBenchOptions, subBenchUsage } from './lib/options.mjs';
import { checkPrerequisites } from './lib/paths.mjs';
import { readCpuMs, readRss } from './lib/proc-stats.mjs';
import { median } from './lib/report.mjs';

const {
  values: { duration: durationS, connections, rounds, json: jsonFile },
} = readOptions(
  subBenchOptions({ durationS: 3, connections: 10, rounds: 5 }),
  subBenchUsage('telemetry-overhead.mjs'),
);

/** The collector stand-in: accepts OTLP/HTTP JSON exports and counts the spans. */
let spansReceived = 0;
let spansWanted = Infinity;
let allSpans = () => undefined;
const collector = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    for (const rs of body.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) spansReceived += (ss.spans ?? []).length;
    }
    if (spansReceived >= spansWanted) allSpans();
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
});
await new Promise((resolve) => collector.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${collector.address().port}/v1/traces`;

const load = (port, seconds) =>
  autocannon(`https://localhost:${port}/v1/data`, { connections, durationS: seconds });

/** api-d, then api-c calling it; `telemetry` is telemetry.yml (or none). */
async function startSystem(name, telemetry) {
  const extra = telemetry ? { 'telemetry.yml': telemetry } : {};
  const d = await startBenchService(
    `${name} api-d`,
    { 'server.yml': serverYml('bench-apid'), ...extra },
    { script: serviceEntry('api-d') },
  );
  const c = await startBenchService(
    `${name} api-c`,
    {
      'server.yml': serverYml('bench-apic'),
      'api_c.yml': `api_d_host: https://localhost:${d.port}\napi_d_path: /v1/data\n`,
      ...extra,
    },
    { script: serviceEntry('api-c') },
  );
  return { name, c, d, pids: [c.pid, d.pid], stop: () => Promise.all([c.stop(), d.stop()]) };
}

checkPrerequisites(['api-c', 'api-d']);
const off = await startSystem('telemetry off', undefined);
const control = await startSystem('control: off again', undefined);
const on = await startSystem(
  'telemetry on (OTLP/HTTP)',
  `enabled: true\nendpoint: ${endpoint}\n`, // every other key at its default
);
const systems = [off, control, on];
const runs = new Map(systems.map((s) => [s, []]));
const cpu = (s) => s.pids.reduce((sum, pid) => sum + readCpuMs(pid), 0);
let onRequests = 0;
let missingSpans;
const peakMb = new Map();
try {
  for (const s of systems) await load(s.c.port, 1); // warm-up: JIT, TLS sessions
  const warmSpans = spansReceived;
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < systems.length; k++) {
      const s = systems[(k + round) % systems.length];
      const before = cpu(s);
      const result = await load(s.c.port, durationS);
      runs.get(s).push({ result, cpuMs: cpu(s) - before });
      if (s === on) onRequests += result.total;
    }
  }
  for (const s of systems) peakMb.set(s, readRss(s.c.pid)?.hwmMb ?? null);
  // Each request of the measured rounds is 3 spans (2 server, 1 client): wait for the last
  // batch (an export interval), at most 5 s.
  spansWanted = warmSpans + onRequests * 3;
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, 5000);
    allSpans = () => {
      clearTimeout(timer);
      resolve();
    };
    if (spansReceived >= spansWanted) allSpans();
  });
  missingSpans = Math.max(0, spansWanted - spansReceived);
} finally {
  await Promise.all(systems.map((s) => s.stop()));
  collector.close();
}

const round3 = (x) => Number(x.toFixed(3));
const cpuPerRequestUs = ({ result, cpuMs }) => (cpuMs * 1000) / result.total;
const summary = (s) => {
  const rs = runs.get(s);
  return {
    requests: rs.reduce((n, r) => n + r.result.total, 0),
    failed: rs.reduce((n, r) => n + r.result.failed, 0),
    rps: Math.round(median(rs.map((r) => r.result.rps))),
    p50: median(rs.map((r) => r.result.p50)),
    p99: median(rs.map((r) => r.result.p99)),
    cpuUsPerRequest: Math.round(median(rs.map(cpuPerRequestUs))),
    rssMb: peakMb.get(s) === null ? null : Number(peakMb.get(s).toFixed(1)),
  };
};
/** Median over the rounds of x/off, each round's runs back to back: drift cancels. */
const paired = (s, figure) =>
  round3(median(runs.get(s).map((r, i) => figure(r) / figure(runs.get(off)[i]))));
const ratiosOf = (s) => ({
  rps: paired(s, (r) => r.result.rps),
  cpuPerRequest: paired(s, cpuPerRequestUs),
  p99: paired(s, (r) => r.result.p99),
});
const a = summary(off);
const c = summary(control);
const b = summary(on);
const ratios = ratiosOf(on);
const noise = ratiosOf(control);

console.log(
  `GET /v1/data on api-c -> api-d: ${rounds} round(s) of ${durationS} s per mode, ${connections} connections; medians of the rounds`,
);
console.table({ [off.name]: a, [control.name]: c, [on.name]: b });
const describe = (r) => `rps ${r.rps}, CPU per request ${r.cpuPerRequest}, p99 latency ${r.p99}`;
console.log(`ratio on/off: ${describe(ratios)}\nnoise floor, control/off: ${describe(noise)}`);
console.log(`spans received: ${spansReceived}; missing: ${missingSpans}`);

if (jsonFile) {
  fs.writeFileSync(
    jsonFile,
    JSON.stringify(
      [
        { case: 'telemetry off', ...a, baseline: null, ratio: null },
        {
          case: 'control: off again',
          ...c,
          baseline: 'telemetry off',
          ratio: noise.rps,
          ratios: noise,
        },
        {
          case: 'telemetry on (OTLP/HTTP)',
          ...b,
          baseline: 'telemetry off',
          ratio: ratios.rps,
          ratios,
          spansReceived,
        },
      ],
      null,
      2,
    ),
  );
}

const problems = [];
const failed = a.failed + b.failed + c.failed;
if (failed) problems.push(`${failed} request(s) failed`);
if (missingSpans > 0) problems.push(`${missingSpans} span(s) never reached the collector`);
if (problems.length) {
  console.error(`FAIL: ${problems.join('; ')}`);
  process.exit(1);
}
