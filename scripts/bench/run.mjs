#!/usr/bin/env node
// pnpm bench: starts what it measures as real processes on loopback, loads each with
// autocannon from its own process, samples RSS from /proc, and prints one Markdown table (also
// written as JSON to bench/results/) with the targets, PASS or MISS. Needs `pnpm certs` and
// `pnpm build`. docs/benchmarks.md describes the cases.
import '../lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import './lib/temp-root.mjs'; // first: every temporary folder under one, removed at exit
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startInfluxd, stopAll } from '@chain/testkit';
import * as chainCases from './lib/chain-cases.mjs';
import { startBenchTokenServer, startMtlsTokenServer } from './lib/chain.mjs';
import { chartSvg } from './lib/chart.mjs';
import { UsageError } from './lib/args.mjs';
import { runOptions, USAGE } from './lib/options.mjs';
import { checkPrerequisites, DOCS_CHART, RESULTS_DIR } from './lib/paths.mjs';
import { markdownTable, targetLines, targets, withRatios } from './lib/report.mjs';
import { metrics, overload, route, telemetry, workers } from './lib/route-cases.mjs';
import { tokens } from './lib/token-case.mjs';

const RUNNERS = {
  route,
  soak: chainCases.soak,
  tokens,
  metrics,
  telemetry,
  workers,
  overload,
};

let opts;
try {
  opts = runOptions(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  console.error(`${err.message}\n${USAGE}`);
  process.exit(2);
}
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}

const t0 = Date.now();
const log = (line) =>
  console.log(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}`);

const needs = (what) => opts.only.some((c) => chainCases.needsOf(c).includes(what) || c === 'soak');
try {
  checkPrerequisites([
    'api-a',
    'api-b',
    'api-c',
    'api-d',
    'petstore',
    ...(needs('tokens') || needs('mtls-tokens') ? ['token-server'] : []),
  ]);
  if (opts.only.includes('shipped-base')) {
    checkPrerequisites(['api-a', 'api-b', 'api-c', 'api-d'], opts.baseRoot);
  }
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
// The Node each side runs on: this run's, and --base-node's (asked of the binary itself).
let nodes = `node ${process.version}`;
try {
  if (opts.baseNode) {
    const version = execFileSync(opts.baseNode, ['--version'], { encoding: 'utf8' }).trim();
    nodes += ` (shipped-base on node ${version})`;
  }
} catch (err) {
  console.error(`--base-node ${opts.baseNode} does not run: ${err.message}`);
  process.exit(2);
}

let tokenServer;
let mtlsTokenServer;
let influx;
const ctx = {
  opts,
  log,
  async tokenServer() {
    tokenServer ??= startBenchTokenServer();
    return tokenServer;
  },
  /** The token server of `pnpm start -- --mtls` (certificate-bound tokens). */
  async mtlsTokenServer() {
    mtlsTokenServer ??= startMtlsTokenServer();
    return mtlsTokenServer;
  },
  /** A real InfluxDB for the shipped configuration's metrics (@chain/testkit's influxd). */
  async influx() {
    influx ??= startInfluxd();
    return influx;
  },
};
const stopShared = async () => {
  const stops = [];
  for (const server of [tokenServer, mtlsTokenServer]) {
    if (server)
      stops.push(
        server.then(
          (ts) => stopAll([ts]),
          () => undefined,
        ),
      );
  }
  if (influx)
    stops.push(
      influx.then(
        (db) => db.stop(),
        () => undefined,
      ),
    );
  await Promise.all(stops);
  if (ctx.logDir) fs.rmSync(ctx.logDir, { recursive: true, force: true });
};
process.once('SIGINT', () => {
  void stopShared().then(() => process.exit(130));
});

log(
  `${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)}, ${nodes}; ` +
    `cases ${opts.only.join(', ')}${opts.quick ? ' (quick)' : ''}`,
);
const rows = [];
let failures = 0;
const record = (result) => {
  for (const row of [result].flat()) {
    rows.push(row);
    if (row.failed) failures++;
  }
};
const failed = (name, err) => {
  failures++;
  log(`${name} failed: ${err.message}`);
  record({
    case: name,
    rps: null,
    p50: null,
    p99: null,
    rssMb: null,
    baseline: null,
    error: err.message.split('\n')[0],
  });
};
// In quick mode, where figures mean nothing, the cases other than the chain comparison run beside
// one another once it is done (the chain's one-second rounds alone on the machine: beside the
// others on two cores a round could end before its first request came back); in a full run every
// case runs alone on the machine, one after another.
const runCase = async (name) => {
  log(`== ${name}`);
  try {
    return await RUNNERS[name](ctx);
  } catch (err) {
    return { error: err, name };
  }
};
const settle = (result) => {
  if (result?.error) failed(result.name, result.error);
  else record(result);
};
const chainNames = chainCases.CHAIN_CASES.filter((c) => opts.only.includes(c));
if (chainNames.length) {
  log(
    `== ${chainNames.join(', ')}: ${opts.rounds} round(s) of ${opts.durationS} s each` +
      (opts.together ? ', the cases of a round at the same time' : ''),
  );
  try {
    record(await chainCases.chainComparison(ctx, chainNames));
  } catch (err) {
    failed(chainNames.join(', '), err);
  }
}
const others = opts.only.filter((c) => RUNNERS[c]);
if (opts.quick) for (const result of await Promise.all(others.map(runCase))) settle(result);
else for (const name of others) settle(await runCase(name));
await stopShared();

const table = withRatios(rows);
const goals = targets(table);
const header =
  `${new Date().toISOString()}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${nodes}, ` +
  `load average at the end ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; ` +
  `chain cases: median of ${opts.rounds} round(s) of ${opts.durationS} s at ${opts.connections} connections after ${opts.warmupS} s warm-up` +
  (opts.together
    ? '; the cases of a round loaded at the same time (--together): read CPU per request'
    : '');
console.log(
  `\n${header}\n\n${markdownTable(table)}\n\nTargets (ratios from this run; chain cases: median of the per-round ratios):\n${targetLines(goals).join('\n')}`,
);

fs.mkdirSync(RESULTS_DIR, { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const file = path.join(RESULTS_DIR, `bench-${stamp}.json`);
fs.writeFileSync(
  file,
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        loadavg: os.loadavg(),
        node: process.version,
        baseNode: opts.baseNode && nodes,
      },
      options: opts,
      rows: table,
      targets: goals,
    },
    null,
    2,
  ) + '\n',
);
fs.copyFileSync(file, path.join(RESULTS_DIR, 'latest.json'));
const svg = chartSvg(
  table,
  `pnpm bench, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.cpus().length} cores, ${nodes}${opts.quick ? ' (quick: figures not meaningful)' : ''}`,
);
const chart = path.join(RESULTS_DIR, `bench-${stamp}.svg`);
fs.writeFileSync(chart, svg);
fs.copyFileSync(chart, path.join(RESULTS_DIR, 'latest.svg'));
console.log(
  `\nwritten to ${path.relative(process.cwd(), file)} and ${path.relative(process.cwd(), chart)}`,
);
// The picture in docs/benchmarks.md is the latest full run's that compared the shipped
// configuration with the baseline and the peer (never a quick run's).
if (
  !opts.quick &&
  ['baseline', 'peer', 'shipped'].every((c) => table.some((r) => r.case === c && r.rps))
) {
  fs.writeFileSync(DOCS_CHART, svg);
  console.log(`chart of this run written to ${path.relative(process.cwd(), DOCS_CHART)}`);
}
const missed = goals.filter((g) => g.verdict === 'MISS');
if (failures) console.log(`\n${failures} case(s) failed or had failed requests`);
if (!opts.quick && missed.length) {
  console.log(
    `\nMISSED target(s):\n${missed
      .map(
        (g) =>
          `- ${g.what}: ${g.value?.toFixed(2)} (target ${g.target})` +
          (g.cpuTarget
            ? `; in CPU per request ${g.cpuRatio?.toFixed(2) ?? '–'} (target ${g.cpuTarget})`
            : ''),
      )
      .join('\n')}`,
  );
}
// Quick figures mean nothing, so a quick run fails only when something did not work.
process.exit(failures || (!opts.quick && missed.length) ? 1 : 0);
