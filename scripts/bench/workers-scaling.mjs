#!/usr/bin/env node
// The `workers` case: the petstore alone (built: `pnpm build`) with server.yml `workers: 1` and
// `workers: 2`, as `pnpm start` configures it otherwise (config/local/petstore: JWT verified with
// the cache, scope checked, an audit line per request, logs on stdout read through a pipe).
// GET /v2/pet/1 with one valid token (kid 100, signed with certs/primary.key). autocannon, in its
// own process, loads each in rotating rounds; medians of the rounds, and the ratio 2 / 1 as the
// median of each round's pair. Also printed: the share of the machine's cores the load generator
// took (on a small machine it competes with the workers for the same cores).
// Exits non-zero when a request failed.
//
//   node scripts/bench/workers-scaling.mjs [--quick] [--duration S] [--connections N]
//                                          [--rounds N] [--json FILE]
// (--json: the row contract of scripts/bench/README.md.)
import '../lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import './lib/temp-root.mjs'; // first: every temporary folder under one, removed at exit
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, devSigningKey, mintToken, serverYml, serviceEntry } from '@chain/testkit';
import { readOptions } from './lib/args.mjs';
import { autocannon } from './lib/autocannon.mjs';
import { startBenchService } from './lib/chain.mjs';
import { subBenchOptions, subBenchUsage } from './lib/options.mjs';
import { checkPrerequisites } from './lib/paths.mjs';
import { readCpuMs, readRss } from './lib/proc-stats.mjs';
import { median } from './lib/report.mjs';
import { wrk, wrkAvailable } from './lib/wrk.mjs';

const {
  values: { quick, duration: durationS, connections, rounds, json: jsonFile },
} = readOptions(
  subBenchOptions({ durationS: 5, connections: 32, rounds: 5 }),
  subBenchUsage('workers-scaling.mjs'),
);
const warmupS = quick ? 0 : 2;
const cores = os.availableParallelism();

/** One valid token for the petstore's `read:pets` scope, as the local token server signs them. */
const token = () =>
  mintToken(devSigningKey('100'), {
    expiresIn: 7200,
    clientId: 'bench-client',
    scope: ['read:pets'],
  });

/** The petstore with `workers` processes; its pids (the primary's and the workers'). */
async function startPetstore(workers) {
  const local = path.join(ROOT, 'config', 'local', 'petstore');
  const files = Object.fromEntries(
    fs
      .readdirSync(local)
      .filter((f) => f.endsWith('.yml'))
      .map((f) => [f, fs.readFileSync(path.join(local, f), 'utf8')]),
  );
  const proc = await startBenchService(
    `petstore, ${workers} worker${workers > 1 ? 's' : ''}`,
    { ...files, 'server.yml': serverYml('com.networknt.petstore-1.0.0', { workers }) },
    { script: serviceEntry('petstore') },
  );
  const workerPids = proc.lines
    .filter((l) => /"msg":"worker \d+ serving"/.test(l))
    .map((l) => JSON.parse(l).pid);
  return { proc, workers, pids: [proc.pid, ...workerPids] };
}

const cpuOf = (pids) => pids.reduce((sum, pid) => sum + readCpuMs(pid), 0);

checkPrerequisites(['petstore']);
const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-workers-'));
const headers = { Authorization: `Bearer ${token()}` };
const systems = [await startPetstore(1), await startPetstore(2)];
/** The load generators: autocannon, as in every other case, and wrk when it is installed. */
const loads = [
  { name: 'autocannon', suffix: '', run: autocannon },
  ...(wrkAvailable() ? [{ name: 'wrk', suffix: ' (wrk)', run: wrk }] : []),
];
/** runs.get(load).get(system): the figures of each round. */
const runs = new Map(loads.map((load) => [load, new Map(systems.map((s) => [s, []]))]));
try {
  for (const s of systems) {
    const url = `https://localhost:${s.proc.port}/v2/pet/1`;
    if (warmupS) await autocannon(url, { connections, durationS: warmupS, headers });
  }
  for (let round = 0; round < rounds; round++) {
    for (const load of loads) {
      for (let k = 0; k < systems.length; k++) {
        const s = systems[(k + round) % systems.length];
        const before = cpuOf(s.pids);
        const runnerBefore = process.cpuUsage();
        const started = Date.now();
        const r = await load.run(`https://localhost:${s.proc.port}/v2/pet/1`, {
          connections,
          durationS,
          headers,
        });
        const wallMs = Date.now() - started;
        const runner = process.cpuUsage(runnerBefore);
        runs
          .get(load)
          .get(s)
          .push({
            ...r,
            serviceCpuMs: cpuOf(s.pids) - before,
            runnerCpuMs: (runner.user + runner.system) / 1000,
            wallMs,
          });
      }
    }
  }
} finally {
  for (const s of systems) s.rssMb = s.pids.reduce((mb, pid) => mb + (readRss(pid)?.hwmMb ?? 0), 0);
  await Promise.all(systems.map((s) => s.proc.stop()));
  fs.rmSync(logDir, { recursive: true, force: true });
}

const pct = (x) => Math.round(x * 100);
const rowOf = (load, s, base) => {
  const rs = runs.get(load).get(s);
  const total = rs.reduce((n, r) => n + r.total, 0);
  const row = {
    case: `petstore ${s.workers} worker${s.workers > 1 ? 's' : ''}${load.suffix}`,
    rps: Math.round(median(rs.map((r) => r.rps))),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    cpuUsPerRequest: Math.round((rs.reduce((n, r) => n + r.serviceCpuMs, 0) * 1000) / total),
    rssMb: Number(s.rssMb.toFixed(1)),
    rounds: rs.map((r) => Math.round(r.rps)),
    failed: rs.reduce((n, r) => n + r.failed, 0),
    // Shares of the machine (all cores) over the load: the service's processes, the load generator.
    serviceCpuShare: median(rs.map((r) => r.serviceCpuMs / (r.wallMs * cores))),
    loadCpuShare: median(rs.map((r) => r.cpuMs / (r.wallMs * cores))),
    runnerCpuShare: median(rs.map((r) => r.runnerCpuMs / (r.wallMs * cores))),
    baseline: base ? rowOf(load, base).case : null,
  };
  row.ratio = base ? median(rs.map((r, i) => r.rps / runs.get(load).get(base)[i].rps)) : null;
  row.notes = `of ${cores} cores: load generator (${load.name}) ${pct(row.loadCpuShare)}%, service ${pct(row.serviceCpuShare)}%, this script ${pct(row.runnerCpuShare)}%`;
  return row;
};
const rows = loads.flatMap((load) => [
  rowOf(load, systems[0]),
  rowOf(load, systems[1], systems[0]),
]);

console.log(
  `GET /v2/pet/1 on the petstore (local config: security on, audit lines), ${rounds} rotating round(s) of ${durationS} s, ${connections} connections, ${cores} cores; medians of the rounds`,
);
console.table(
  Object.fromEntries(
    rows.map(({ case: name, rounds: _r, baseline: _b, notes: _n, ...r }) => [name, r]),
  ),
);
for (const r of rows.filter((row) => row.ratio !== null)) {
  console.log(
    `ratio ${r.case} / ${r.baseline} (median of the rounds' pairs): ${r.ratio.toFixed(2)}`,
  );
}
if (loads.length === 1) console.log('wrk is not installed (apt-get install wrk): autocannon only');
for (const r of rows) console.log(`${r.case}: ${r.notes}`);

if (jsonFile) fs.writeFileSync(jsonFile, JSON.stringify(rows, null, 2));
const failed = rows.reduce((n, r) => n + r.failed, 0);
if (failed) {
  console.error(`FAIL: ${failed} request(s) failed`);
  process.exit(1);
}
