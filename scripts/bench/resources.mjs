#!/usr/bin/env node
// What one pod of each service needs: memory (RSS) and CPU of every process of the chain, the
// token server and the petstore, measured from /proc while idle and under load. The Kubernetes
// manifests (deploy/kubernetes) take their resource requests and limits from these figures;
// docs/kubernetes.md has the table of the last run and the rule that turns it into numbers.
//
//   node scripts/bench/resources.mjs [--duration S] [--connections N] [--json FILE]
//
// Security on (token cache on), as the manifests run the services; metrics off (no InfluxDB
// here). The load is api-a's GET /v1/data (every hop of the chain works on it, and the token
// server issues the four own tokens), then the petstore's GET /v2/pet/1, each with a user token,
// from autocannon in its own process. Per process: RSS when started and warmed up (idle), its
// peak while loaded (VmHWM-like sampling every 250 ms), CPU time per request and the cores used
// at the rate reached. Needs `pnpm certs` and `pnpm build`; uses free loopback ports only.
import '../lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import './lib/temp-root.mjs'; // first: every temporary folder under one, removed at exit
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clientCredentialsToken, serverYml, startTokenServer, stopAll } from '@chain/testkit';
import { readOptions } from './lib/args.mjs';
import { autocannon } from './lib/autocannon.mjs';
import { securityYml, startBenchService, startServiceChain } from './lib/chain.mjs';
import { checkPrerequisites } from './lib/paths.mjs';
import { readCpuMs, readRss, sampleRss } from './lib/proc-stats.mjs';

const { values } = readOptions(
  {
    duration: { kind: 'seconds', default: 15 },
    connections: { kind: 'count', default: 32 },
    json: { kind: 'text' },
  },
  'node scripts/bench/resources.mjs [--duration S] [--connections N] [--json FILE]',
);
const { duration: durationS, connections, json: jsonFile } = values;

checkPrerequisites(['api-a', 'api-b', 'api-c', 'api-d', 'petstore', 'token-server']);

const started = [];
try {
  const tokenServer = await startTokenServer();
  started.push(tokenServer);
  const chain = await startServiceChain({ security: 'cache', tokenServer });
  started.push(...chain.processes);
  const petstore = await startBenchService('petstore', {
    'server.yml': serverYml('com.networknt.petstore-1.0.0'),
    'security.yml': securityYml('cache'),
    'metrics.yml': 'enabled: false\n',
  });
  started.push(petstore);
  const user = await clientCredentialsToken(
    tokenServer.tokenUrl,
    'chain-user',
    'chain-user-secret',
    'api_a.r read:pets',
  );
  const headers = { Authorization: `Bearer ${user}` };
  const petUrl = `https://localhost:${petstore.port}/v2/pet/1`;

  // Warm-up: JIT, TLS sessions, the own tokens, the verified-token cache.
  await autocannon(chain.url, { connections, durationS: 2, headers });
  await autocannon(petUrl, { connections, durationS: 2, headers });
  const idle = Object.fromEntries(started.map((p) => [p.name, readRss(p.pid).rssMb]));

  const measure = async (url, processes) => {
    const rss = sampleRss(processes);
    const cpuBefore = processes.map((p) => readCpuMs(p.pid));
    const r = await autocannon(url, { connections, durationS, headers });
    const cpu = processes.map((p, i) => readCpuMs(p.pid) - cpuBefore[i]);
    const peaks = rss.stop();
    if (r.failed > 0) throw new Error(`${url}: ${r.failed} failed requests under load`);
    return processes.map((p, i) => ({
      name: p.name,
      rps: r.rps,
      idleMb: idle[p.name],
      peakMb: peaks[p.name].peakMb,
      cpuMsPerRequest: cpu[i] / r.total,
      cores: cpu[i] / (durationS * 1000),
    }));
  };
  const rows = [
    ...(await measure(chain.url, [...chain.processes, tokenServer])),
    ...(await measure(petUrl, [petstore])),
  ];

  const f = (n, d = 1) => n.toFixed(d);
  console.log(
    `${os.cpus().length} cores, node ${process.version}, ${durationS} s at ${connections} connections per case`,
  );
  console.log('| process | load | req/s | idle RSS (MB) | peak RSS (MB) | CPU ms/req | cores |');
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const load = r.name === 'petstore' ? 'GET /v2/pet/1' : 'GET api-a /v1/data';
    console.log(
      `| ${r.name} | ${load} | ${f(r.rps, 0)} | ${f(r.idleMb)} | ${f(r.peakMb)} | ${f(r.cpuMsPerRequest, 3)} | ${f(r.cores, 2)} |`,
    );
  }
  if (jsonFile) {
    fs.mkdirSync(path.dirname(path.resolve(jsonFile)), { recursive: true });
    fs.writeFileSync(jsonFile, JSON.stringify(rows, null, 2) + '\n');
  }
} finally {
  await stopAll(started);
}
