// Command-line options of run.mjs, and of the bench scripts that also run on their own.
import path from 'node:path';
import { parseOptions, UsageError } from './args.mjs';
import { CHAIN_CASES } from './chain-cases.mjs';
import { NEEDS_BASE } from './systems.mjs';

export const CASES = [
  ...CHAIN_CASES,
  'route',
  'soak',
  'tokens',
  'metrics',
  'telemetry',
  'workers',
  'overload',
];

/**
 * What `--quick` runs without `--only`: one system of each kind side by side (the bare chain, the
 * peer, the shipped configuration), the route, the soak and the token cases, for a moment each.
 * The metrics and telemetry overhead scripts start their own services and InfluxDB; they have a
 * quick mode of their own (`--quick --only metrics,telemetry`).
 */
export const QUICK_CASES = ['baseline', 'peer', 'shipped', 'route', 'soak', 'tokens'];

export const USAGE = `node scripts/bench/run.mjs [options]   (pnpm bench -- [options])
  --duration S       seconds of load per chain case and round (default 4; --quick 1)
  --rounds N         rounds of the chain cases, in rotating order; medians (default 5; --quick 1)
  --connections N    connections of the load generator for the chain cases (default 32)
  --together         load the chain cases of a round all at the same time, each by its own
                     load generator, instead of one after the other: compare them in CPU
                     per request (they share the cores); for small differences (two or three cases)
  --only a,b         cases to run, of: ${CASES.join(', ')}
  --base DIR         another checkout of this project, built (pnpm build there): its services
                     run as the case shipped-base, with the shipped configuration of this one,
                     in the same rounds (a change against the code before it)
  --base-node PATH   the node binary shipped-base runs on (default: this one), for code built
                     for another Node (its version is printed beside this run's)
  --skip a,b         cases to leave out of the run
  --tokens N         distinct tokens in the memory case (default 1000000; --quick 1000)
  --soak S           seconds of the soak (default 60; --quick 1)
  --quick            ${QUICK_CASES.join(', ')} for a moment each, side by side: proves the
                     script works in under 20 s, figures are not meaningful
  --help
A malformed value (--rounds 0, --connections 1.5, --duration abc) or an unknown option exits 2.`;

/** run.mjs's options: the one validation table of lib/args.mjs, with run.mjs's defaults. */
const RUN_OPTIONS = {
  quick: { kind: 'flag' },
  duration: { kind: 'seconds', default: (v) => (v.quick ? 1 : 4) },
  rounds: { kind: 'count', default: (v) => (v.quick ? 1 : 5) },
  connections: { kind: 'count', default: 32 },
  together: { kind: 'flag' },
  only: { kind: 'list' },
  skip: { kind: 'list' },
  base: { kind: 'text' },
  'base-node': { kind: 'text' },
  tokens: { kind: 'count', default: (v) => (v.quick ? 1000 : 1_000_000) },
  soak: { kind: 'seconds', default: (v) => (v.quick ? 1 : 60) },
  help: { kind: 'flag' },
};

/** run.mjs's command line; throws a UsageError (exit 2) naming the option or the case. */
export function runOptions(argv) {
  const { values: v, given } = parseOptions(argv, RUN_OPTIONS);
  // shipped-base runs only with --base: every case by default means every case it can run.
  const only =
    v.only ?? (v.quick ? QUICK_CASES : CASES.filter((c) => v.base || c !== 'shipped-base'));
  const skip = v.skip ?? [];
  const unknown = [...only, ...skip].filter((c) => !CASES.includes(c));
  if (unknown.length) {
    throw new UsageError(`unknown case(s) ${unknown.join(', ')}; cases: ${CASES.join(', ')}`);
  }
  if (only.includes('shipped-base') && !skip.includes('shipped-base') && !v.base) {
    throw new UsageError(NEEDS_BASE);
  }
  if (v['base-node'] !== undefined && !v.base) {
    throw new UsageError('--base-node needs --base DIR: the checkout that runs on it');
  }
  return {
    baseRoot: v.base === undefined ? undefined : path.resolve(v.base),
    baseNode: v['base-node'] === undefined ? undefined : path.resolve(v['base-node']),
    help: v.help,
    quick: v.quick,
    only: only.filter((c) => !skip.includes(c)),
    durationS: v.duration,
    warmupS: v.quick ? 0 : Math.min(3, v.duration),
    connections: v.connections,
    together: v.together,
    rounds: v.rounds,
    explicitDuration: given.has('duration'),
    explicitConnections: given.has('connections'),
    tokens: v.tokens,
    soakS: v.soak,
    soakWarmupS: v.quick ? 0 : 10,
  };
}

/**
 * The options of a sub-benchmark (security-route, metrics-overhead, telemetry-overhead,
 * workers-scaling), which also runs on its own: `--quick` (1 round of 1 s), `--duration S`,
 * `--connections N`, `--rounds N`, and `--json FILE`, where run.mjs has it write its rows (the
 * contract of scripts/bench/README.md); `defaults` are that script's for a full run.
 */
export const subBenchOptions = (defaults) => ({
  quick: { kind: 'flag' },
  duration: { kind: 'seconds', default: (v) => (v.quick ? 1 : defaults.durationS) },
  connections: { kind: 'count', default: defaults.connections },
  rounds: { kind: 'count', default: (v) => (v.quick ? 1 : defaults.rounds) },
  json: { kind: 'text' },
});

/** The usage line of a sub-benchmark. */
export const subBenchUsage = (script) =>
  `node scripts/bench/${script} [--quick] [--duration S] [--connections N] [--rounds N] [--json FILE]`;
