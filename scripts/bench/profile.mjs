#!/usr/bin/env node
// Where the time goes per hop: starts a chain with `node --cpu-prof` on every hop, loads api-a
// with autocannon, stops the chain (the profiles are written on exit) and prints, per hop, the
// CPU per request split into TLS, framework, verification, downstream client, JSON, ...
// The .cpuprofile files stay in the printed folder (open them in Chrome DevTools).
//
//   node scripts/bench/profile.mjs [--system bare|peer|open|cache|nocache|shipped|shipped-no-audit]
//                                  [--duration S] [--connections N] [--base DIR] [--no-profile]
//
// `--base DIR` with `--system shipped-base`: the built services of another checkout.
//
// `shipped` is the configuration `pnpm start` and the compose folders run (run.mjs's `shipped`
// case): an audit line per verified request, metrics to a real InfluxDB, logs through a pipe into
// files.
import '../lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clientCredentialsToken, startInfluxd, startTokenServer, stopAll } from '@chain/testkit';
import { autocannon } from './lib/autocannon.mjs';
import { LOAD_CLIENT, closeLogs, startMtlsTokenServer } from './lib/chain.mjs';
import { splitProfile } from './lib/cpu-profile.mjs';
import { readCpuMs } from './lib/proc-stats.mjs';
import { readOptions } from './lib/args.mjs';
import { NEEDS_BASE, SYSTEMS, SYSTEM_NAMES, needsOf } from './lib/systems.mjs';

// Earlier names of the cases: open, cache, nocache, bare.
const ALIASES = {
  bare: 'baseline',
  open: 'chain-open',
  cache: 'chain-cache',
  nocache: 'chain-nocache',
};
const USAGE = `node scripts/bench/profile.mjs [--system S] [--duration S] [--connections N] [--base DIR] [--no-profile]
  --system: ${[...SYSTEM_NAMES, ...Object.keys(ALIASES)].join(', ')} (default shipped)`;
const { values: options } = readOptions(
  {
    system: {
      kind: 'text',
      choices: [...SYSTEM_NAMES, ...Object.keys(ALIASES)],
      default: 'shipped',
    },
    duration: { kind: 'seconds', default: 10 },
    connections: { kind: 'count', default: 32 },
    base: { kind: 'text' },
    'no-profile': { kind: 'flag' },
  },
  USAGE,
);
const system = ALIASES[options.system] ?? options.system;
if (system === 'shipped-base' && options.base === undefined) {
  console.error(`${NEEDS_BASE}\n${USAGE}`);
  process.exit(2);
}
const { duration: durationS, connections } = options;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-profile-${system}-`));

let tokenServer;
let influx;
const chain = [];
try {
  const headers = {};
  const mtls = needsOf(system).includes('mtls-tokens');
  if (needsOf(system).includes('tokens') || mtls) {
    tokenServer = mtls ? await startMtlsTokenServer() : await startTokenServer();
    headers.Authorization = `Bearer ${await clientCredentialsToken(tokenServer.tokenUrl, 'chain-user', 'chain-user-secret', 'api_a.r')}`;
  }
  // A chain on two-way TLS: the load generator presents a client certificate.
  const client = mtls ? LOAD_CLIENT : undefined;
  if (needsOf(system).includes('influx')) influx = await startInfluxd();
  chain.push(
    await SYSTEMS[system].start({
      tokenServer,
      mtlsTokenServer: tokenServer,
      influx,
      logDir: fs.mkdtempSync(path.join(dir, 'logs-')),
      // shipped-base: the services of another built checkout.
      baseRoot: options.base === undefined ? undefined : path.resolve(options.base),
      nodeArgs: options['no-profile']
        ? []
        : ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, 'profiles')}`],
    }),
  );
  const [{ url, processes }] = chain;
  console.log(
    `profiling ${system} chain: warm-up 2 s, then ${durationS} s at ${connections} connections`,
  );
  await autocannon(url, { connections, durationS: 2, headers, client });
  const cpuBefore = processes.map((p) => readCpuMs(p.pid));
  const runnerBefore = process.cpuUsage();
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const r = await autocannon(url, { connections, durationS, headers, client });
  const toUs = Number(process.hrtime.bigint() / 1000n);
  const runner = process.cpuUsage(runnerBefore);
  const cpuByName = Object.fromEntries(
    processes.map((p, i) => [p.name, readCpuMs(p.pid) - cpuBefore[i]]),
  );
  console.log(`${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.failed} failed`);
  // This process reads every hop's stdout (the log reader, as the pnpm start runner does).
  console.log(
    `log reader (this process): ${Math.round((runner.user + runner.system) / r.total)} µs CPU per request; ` +
      `load generator: ${Math.round((r.cpuMs * 1000) / r.total)} µs CPU per request`,
  );
  console.log(
    `CPU µs per request (/proc): ${processes
      .map((p) => `${p.name} ${Math.round((cpuByName[p.name] * 1000) / r.total)}`)
      .join(', ')}; whole chain ${Math.round(
      (Object.values(cpuByName).reduce((a, b) => a + b, 0) * 1000) / r.total,
    )}`,
  );
  const pids = Object.fromEntries(processes.map((p) => [p.pid, p.name]));
  await stopAll(processes);
  await closeLogs(processes);
  chain.length = 0;
  // Only the samples of the measured run count (not the start-up, not the warm-up).
  const requests = r.total;
  const files = fs.readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.cpuprofile'));
  const hops = {};
  for (const f of files) {
    const pid = /CPU\.\d+\.\d+\.(\d+)\./.exec(path.basename(f))?.[1];
    hops[pids[pid] ?? path.basename(f)] = splitProfile(path.join(dir, f), { fromUs, toUs });
  }
  const names = Object.keys(hops).sort();
  const parts = [...new Set(names.flatMap((n) => Object.keys(hops[n].ms)))].filter(
    (p) => p !== 'idle',
  );
  const share = (n, p) => (100 * (hops[n].ms[p] ?? 0)) / hops[n].busyMs;
  parts.sort((a, b) => names.reduce((s, n) => s + share(n, b) - share(n, a), 0));
  const rows = {
    // From /proc/<pid>/stat over the measured run: what the hop really burnt per request.
    'CPU µs per request (/proc)': Object.fromEntries(
      names.map((n) => [n, Math.round((cpuByName[n] * 1000) / r.total)]),
    ),
    // From the profile (the measured run only): wall-clock samples, so time a hop was preempted
    // at a syscall counts too (mostly socket writes, which wake the peer on a 2-core machine).
    'profiled µs per request': Object.fromEntries(
      names.map((n) => [n, Math.round((hops[n].busyMs * 1000) / requests)]),
    ),
  };
  for (const p of parts) {
    rows[p] = Object.fromEntries(names.map((n) => [n, `${share(n, p).toFixed(1)}%`]));
  }
  const total = Object.values(rows['CPU µs per request (/proc)']).reduce((a, b) => a + b, 0);
  console.log(
    `\nCPU per hop (share of its busy time); whole chain ${total} µs CPU per request; ` +
      `profiles in ${dir} (measured window ${fromUs}-${toUs} µs on the monotonic clock)`,
  );
  console.table(rows);
} finally {
  await stopAll(chain.flatMap((c) => c.processes));
  if (tokenServer) await tokenServer.stop();
  if (influx) await influx.stop();
}
