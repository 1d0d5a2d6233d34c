#!/usr/bin/env node
// The load generator of the benchmark, in its own process: autocannon (programmatic API, the
// same engine as its CLI) against one URL; prints one JSON line with autocannon's result and the
// CPU this process used, so the runner can say what share of the machine the load took.
//
//   node scripts/bench/load.mjs --url URL [--connections N] [--duration S] [--rate R]
//                               [--header 'Name: value']... [--client-cert PEM --client-key PEM]
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { readOptions } from './lib/args.mjs';

const autocannon = createRequire(import.meta.url)('autocannon');
const USAGE =
  'node scripts/bench/load.mjs --url URL [--connections N] [--duration S] [--rate R] [--header "Name: value"]... [--client-cert PEM --client-key PEM]';
const { values } = readOptions(
  {
    url: { kind: 'url', required: true },
    connections: { kind: 'count', default: 32 },
    duration: { kind: 'seconds', default: 4 },
    rate: { kind: 'count' },
    header: { kind: 'header', multiple: true },
    // A client certificate to present (a system on two-way TLS).
    'client-cert': { kind: 'text' },
    'client-key': { kind: 'text' },
  },
  USAGE,
);
if ((values['client-cert'] === undefined) !== (values['client-key'] === undefined)) {
  console.error(`--client-cert and --client-key go together\n${USAGE}`);
  process.exit(2);
}
const headers = Object.fromEntries(values.header);
const tlsOptions = values['client-cert']
  ? {
      cert: fs.readFileSync(values['client-cert']),
      key: fs.readFileSync(values['client-key']),
    }
  : undefined;
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url: values.url,
  connections: values.connections,
  duration: values.duration,
  headers,
  ...(tlsOptions ? { tlsOptions } : {}),
  // A fixed rate of requests per second in all (profiling at equal load), else as fast as it goes.
  ...(values.rate ? { overallRate: values.rate } : {}),
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
