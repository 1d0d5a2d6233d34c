#!/usr/bin/env node
// Where the time goes per hop: starts a chain with `node --cpu-prof` on every hop, loads api-a
// with autocannon, stops the chain (the profiles are written on exit) and prints, per hop, the
// CPU per request split into TLS, framework, verification, downstream client, JSON, ...
// The .cpuprofile files stay in the printed folder (open them in Chrome DevTools).
//
//   node scripts/bench/profile.mjs [--system bare|open|cache|nocache] [--duration S] [--connections N]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { autocannon } from './lib/autocannon.mjs';
import { fetchToken, startBareChain, startServiceChain, startTokenServer } from './lib/chain.mjs';
import { splitProfile } from './lib/cpu-profile.mjs';
import { readCpuMs, stopAll } from './lib/processes.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const system = option('system', 'cache');
const durationS = Number(option('duration', 10));
const connections = Number(option('connections', 32));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-profile-${system}-`));

let tokenServer;
const chain = [];
const nodeArgs = (name) => ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, name)}`];
try {
  const headers = {};
  if (system === 'bare') {
    // one profile folder per hop: started one by one with their own folder
    const bare = await startBareChain({ nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}/bare`] });
    chain.push(bare);
  } else {
    if (system !== 'open') {
      tokenServer = await startTokenServer();
      headers.Authorization = `Bearer ${await fetchToken(tokenServer.tokenUrl, 'chain-user', 'chain-user-secret', 'api_a.r')}`;
    }
    chain.push(
      await startServiceChain({
        security: system === 'open' ? 'off' : system,
        tokenServer,
        nodeArgs: nodeArgs('services'),
      }),
    );
  }
  const [{ url, processes }] = chain;
  console.log(
    `profiling ${system} chain: warm-up 2 s, then ${durationS} s at ${connections} connections`,
  );
  await autocannon(url, { connections, durationS: 2, headers });
  const cpuBefore = processes.map((p) => readCpuMs(p.pid));
  const r = await autocannon(url, { connections, durationS, headers });
  const cpuByName = Object.fromEntries(
    processes.map((p, i) => [p.name, readCpuMs(p.pid) - cpuBefore[i]]),
  );
  console.log(`${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.failed} failed`);
  const pids = Object.fromEntries(processes.map((p) => [p.pid, p.name]));
  await stopAll(processes);
  chain.length = 0;
  // Requests seen by each hop over the whole profile: warm-up + measured run.
  const requests = r.total + (r.total / durationS) * 2;
  const files = fs.readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.cpuprofile'));
  const hops = {};
  for (const f of files) {
    const pid = /CPU\.\d+\.\d+\.(\d+)\./.exec(path.basename(f))?.[1];
    hops[pids[pid] ?? path.basename(f)] = splitProfile(path.join(dir, f));
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
    // From the profile (warm-up + run): wall-clock samples, so time a hop was preempted at a
    // syscall counts too (mostly socket writes, which wake the peer on a 2-core machine).
    'profiled µs per request': Object.fromEntries(
      names.map((n) => [n, Math.round((hops[n].busyMs * 1000) / requests)]),
    ),
  };
  for (const p of parts) {
    rows[p] = Object.fromEntries(names.map((n) => [n, `${share(n, p).toFixed(1)}%`]));
  }
  console.log(`\nCPU per hop (share of its busy time); profiles in ${dir}`);
  console.table(rows);
} finally {
  await stopAll(chain.flatMap((c) => c.processes));
  if (tokenServer) await tokenServer.stop();
}
