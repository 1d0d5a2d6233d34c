#!/usr/bin/env node
// The `overload` case: the chain api-a ... api-d (security on with the cache, no audit line)
// driven past its capacity, with limit.yml on api-a: a server rate limit of half the capacity
// measured first (on a chain without limits), and load shedding at an event loop 200 ms late or
// 8 requests in progress.
// Phases: the capacity (closed loop, --connections, on the chain without limits); the unloaded
// latency (one connection, 20 requests a second); the overload (4x --connections, each paced so
// that twice the capacity is offered, after 2 s of it unmeasured); then a flood (the same
// connections in a closed loop: clients that ignore Retry-After). Pass, on the overload: the
// accepted requests' p99 within 2x the unloaded p99, every other answer a 429 or a 503, no
// failed request, every process of the chain alive at the end.
//
//   node scripts/bench/overload.mjs [--quick] [--duration S] [--connections N] [--rounds N]
//                                   [--json FILE]
// (--json: the row contract of scripts/bench/README.md; --rounds is read and not used.)
import '../lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import './lib/temp-root.mjs'; // first: every temporary folder under one, removed at exit
import fs from 'node:fs';
import https from 'node:https';
import { httpsRequest, startTokenServer, stopAll } from '@chain/testkit';
import { readOptions } from './lib/args.mjs';
import { startServiceChain } from './lib/chain.mjs';
import { userToken } from './lib/chain-cases.mjs';
import { subBenchOptions, subBenchUsage } from './lib/options.mjs';
import { checkPrerequisites } from './lib/paths.mjs';

const {
  values: { quick, duration: durationS, connections, json: jsonFile },
} = readOptions(
  subBenchOptions({ durationS: 10, connections: 16, rounds: 1 }),
  subBenchUsage('overload.mjs'),
);
const MAX_DELAY_MS = 200;
/** Requests in progress at api-a past which a new one is shed (overload.maxInFlight). */
const IN_FLIGHT = 8;

const quantile = (sorted, q) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null;
const round2 = (x) => (x === null ? null : Math.round(x * 100) / 100);

/**
 * Requests on `conns` keep-alive connections for `ms`: closed loop, or one every `pacedMs` per
 * connection. Latency in ms of the 200s; the count of each other status; errors.
 */
async function drive(url, headers, { conns, ms, pacedMs }) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: conns });
  const accepted = [];
  const statuses = {};
  let errors = 0;
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: conns }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        try {
          const { status } = await httpsRequest(url, { headers, agent });
          if (status === 200) accepted.push(performance.now() - t);
          else statuses[status] = (statuses[status] ?? 0) + 1;
        } catch {
          errors++;
        }
        const wait = pacedMs ? t + pacedMs - performance.now() : 0;
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }),
  );
  agent.destroy();
  accepted.sort((a, b) => a - b);
  return {
    accepted: accepted.length,
    rps: Math.round(accepted.length / (ms / 1000)),
    p50: round2(quantile(accepted, 0.5)),
    p99: round2(quantile(accepted, 0.99)),
    statuses,
    errors,
  };
}

checkPrerequisites(['api-a', 'api-b', 'api-c', 'api-d', 'token-server']);
const tokenServer = await startTokenServer();
const headers = { Authorization: `Bearer ${await userToken(tokenServer)}` };
const ms = durationS * 1000;
let rows;
try {
  const open = await startServiceChain({ security: 'cache', tokenServer });
  let capacity;
  try {
    await drive(open.url, headers, { conns: connections, ms: quick ? 500 : 2000 });
    capacity = await drive(open.url, headers, { conns: connections, ms });
  } finally {
    await stopAll(open.processes);
  }
  const rate = Math.max(1, Math.floor(capacity.rps / 2));
  const limit = `enabled: true\nkey: server\nrateLimit: ${rate}/s\noverload:\n  maxEventLoopDelay: ${MAX_DELAY_MS}\n  maxInFlight: ${IN_FLIGHT}\n`;
  console.log(
    `capacity ${capacity.rps}/s on ${connections} connections; limit.yml rateLimit ${rate}/s`,
  );
  const chain = await startServiceChain({
    security: 'cache',
    tokenServer,
    entryFiles: { 'limit.yml': limit },
  });
  try {
    const { url } = chain;
    const unloaded = await drive(url, headers, { conns: 1, ms, pacedMs: 50 });
    // Twice the capacity offered: each of 4x --connections sends one request every `pacedMs`.
    const conns = connections * 4;
    const pacedMs = (conns * 1000) / (2 * capacity.rps);
    // The first window's burst of `rate` at once is the limiter's start, not its steady state.
    await drive(url, headers, { conns, ms: quick ? 500 : 2000, pacedMs });
    const over = await drive(url, headers, { conns, ms, pacedMs });
    // Clients that ignore Retry-After and send again at once, as fast as answers come.
    const flood = await drive(url, headers, { conns, ms });
    let alive = chain.processes.every(
      (p) => p.child.exitCode === null && p.child.signalCode === null,
    );
    const health = await httpsRequest(new URL('/health', url).href);
    alive &&= health.status === 200;
    const refused = (over.statuses[429] ?? 0) + (over.statuses[503] ?? 0);
    const other = Object.entries(over.statuses)
      .filter(([status]) => status !== '429' && status !== '503')
      .reduce((n, [, count]) => n + count, 0);
    rows = [
      {
        case: `capacity, no limits (${connections} connections)`,
        ...capacity,
        rssMb: null,
        baseline: null,
        ratio: null,
      },
      { case: 'unloaded (20/s)', ...unloaded, rssMb: null, baseline: null, ratio: null },
      {
        case: `flood: ${conns} connections in a closed loop, accepted`,
        ...flood,
        rssMb: null,
        baseline: 'unloaded (20/s)',
        ratio: round2(flood.p99 / unloaded.p99),
        metric: 'p99 of accepted / unloaded p99',
      },
      {
        case: `2x capacity offered (${conns} connections), accepted`,
        ...over,
        rssMb: null,
        baseline: 'unloaded (20/s)',
        ratio: round2(over.p99 / unloaded.p99),
        metric: 'p99 of accepted / unloaded p99',
        refused,
        other,
        alive,
        rate,
        failed: other + over.errors + unloaded.errors + flood.errors + (unloaded.accepted ? 0 : 1),
      },
    ];
  } finally {
    await stopAll(chain.processes);
  }
} finally {
  await tokenServer.stop();
}

console.table(Object.fromEntries(rows.map(({ case: name, statuses: _s, ...r }) => [name, r])));
const over = rows[3];
console.log(`overloaded: statuses other than 200 ${JSON.stringify(over.statuses)}`);
const pass = over.ratio !== null && over.ratio <= 2 && over.failed === 0 && over.alive;
console.log(
  `${pass ? 'PASS' : 'MISS'}: accepted p99 ${over.p99} ms = ${over.ratio}x the unloaded ${rows[1].p99} ms (target 2x); ${over.refused} refused (429/503), ${over.other} other answers, ${over.errors} errors; ${over.alive ? 'every process alive' : 'A PROCESS DIED'}`,
);
if (jsonFile) fs.writeFileSync(jsonFile, JSON.stringify(rows, null, 2));
if (over.failed || !over.alive) process.exit(1);
