// Command-line options of run.mjs, and of the bench scripts that also run on their own.
import path from 'node:path';
import { optionOf } from './args.mjs';
import { CHAIN_CASES } from './chain-cases.mjs';
import { NEEDS_BASE } from './systems.mjs';

export const CASES = [...CHAIN_CASES, 'route', 'soak', 'tokens', 'metrics', 'telemetry', 'workers'];

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
  --skip a,b         cases to leave out of the run
  --tokens N         distinct tokens in the memory case (default 1000000; --quick 1000)
  --soak S           seconds of the soak (default 60; --quick 1)
  --quick            ${QUICK_CASES.join(', ')} for a moment each, side by side: proves the
                     script works in under 20 s, figures are not meaningful
  --help`;

export function parseOptions(argv) {
  const has = (name) => argv.includes(`--${name}`);
  const value = (name) => {
    const i = argv.indexOf(`--${name}`);
    if (i < 0) return undefined;
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`--${name} needs a value`);
    return v;
  };
  const number = (name, fallback) => {
    const v = value(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0)
      throw new Error(`--${name} must be a positive number, got ${v}`);
    return n;
  };
  const list = (name) =>
    value(name)
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const quick = has('quick');
  const base = value('base');
  // shipped-base runs only with --base: every case by default means every case it can run.
  const only =
    list('only') ?? (quick ? QUICK_CASES : CASES.filter((c) => base || c !== 'shipped-base'));
  const skip = list('skip') ?? [];
  const unknown = [...only, ...skip].filter((c) => !CASES.includes(c));
  if (unknown.length)
    throw new Error(`unknown case(s) ${unknown.join(', ')}; cases: ${CASES.join(', ')}`);
  if (only.includes('shipped-base') && !skip.includes('shipped-base') && !base) {
    throw new Error(NEEDS_BASE);
  }
  const durationS = number('duration', quick ? 1 : 4);
  return {
    baseRoot: base === undefined ? undefined : path.resolve(base),
    help: has('help'),
    quick,
    only: only.filter((c) => !skip.includes(c)),
    durationS,
    warmupS: quick ? 0 : Math.min(3, durationS),
    connections: number('connections', 32),
    together: has('together'),
    rounds: Math.floor(number('rounds', quick ? 1 : 5)),
    explicitDuration: value('duration') !== undefined,
    explicitConnections: value('connections') !== undefined,
    tokens: Math.floor(number('tokens', quick ? 1000 : 1_000_000)),
    soakS: number('soak', quick ? 1 : 60),
    soakWarmupS: quick ? 0 : 10,
  };
}

/**
 * The options of a bench script that also runs on its own (metrics-overhead, telemetry-overhead,
 * workers-scaling): `--quick` (1 round of 1 s), `--duration S`, `--connections N`, `--rounds N`,
 * `--json FILE`, with that script's defaults for a full run.
 */
export function scriptOptions(argv, defaults) {
  const option = optionOf(argv);
  const quick = argv.includes('--quick');
  return {
    quick,
    durationS: Number(option('duration', quick ? 1 : defaults.durationS)),
    connections: Number(option('connections', defaults.connections)),
    rounds: Number(option('rounds', quick ? 1 : defaults.rounds)),
    jsonFile: option('json', undefined),
  };
}
