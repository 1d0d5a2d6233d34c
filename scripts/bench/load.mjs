#!/usr/bin/env node
// The load generator of the benchmark, in its own process: autocannon (programmatic API, the
// same engine as its CLI) against one URL; prints one JSON line with autocannon's result and the
// CPU this process used, so the runner can say what share of the machine the load took.
//
//   node scripts/bench/load.mjs --url URL --connections N --duration S [--rate R]
//                               [--header 'Name: value']...
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from './lib/paths.mjs';
import { optionOf } from './lib/args.mjs';

const autocannon = createRequire(path.join(ROOT, 'package.json'))('autocannon');
const args = process.argv.slice(2);
const option = optionOf(args);
const headers = {};
args.forEach((arg, i) => {
  if (arg !== '--header') return;
  const line = args[i + 1];
  const colon = line.indexOf(':');
  headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
});
const url = option('url');
if (!url) {
  console.error('usage: load.mjs --url URL --connections N --duration S [--header "Name: value"]');
  process.exit(2);
}
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url,
  connections: Number(option('connections') ?? 32),
  duration: Number(option('duration') ?? 4),
  headers,
  // A fixed rate of requests per second in all (profiling at equal load), else as fast as it goes.
  ...(option('rate') ? { overallRate: Number(option('rate')) } : {}),
});
const cpu = process.cpuUsage(cpuBefore);
process.stdout.write(
  JSON.stringify({
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    ok: result['2xx'],
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    durationMs: result.duration * 1000,
    cpuMs: (cpu.user + cpu.system) / 1000,
  }) + '\n',
);
