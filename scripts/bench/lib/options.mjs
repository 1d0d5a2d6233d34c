// Command-line options of run.mjs.
export const CASES = [
  'baseline',
  'chain-open',
  'chain-cache',
  'chain-nocache',
  'chain-express',
  'route',
  'soak',
  'tokens',
  'metrics',
  'telemetry',
];

export const USAGE = `node scripts/bench/run.mjs [options]   (pnpm bench -- [options])
  --duration S       seconds of load per chain case and round (default 4; --quick 2)
  --rounds N         rounds of the chain cases, in rotating order; medians (default 5; --quick 1)
  --connections N    autocannon connections for the chain cases (default 32)
  --only a,b         cases to run, of: ${CASES.join(', ')}
  --tokens N         distinct tokens in the memory case (default 1000000; --quick 2000)
  --soak S           seconds of the soak (default 60; --quick 3)
  --quick            a few seconds per case: proves the script works, figures are not meaningful
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
  const quick = has('quick');
  const only =
    value('only')
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean) ?? CASES;
  const unknown = only.filter((c) => !CASES.includes(c));
  if (unknown.length)
    throw new Error(`unknown case(s) ${unknown.join(', ')}; cases: ${CASES.join(', ')}`);
  const durationS = number('duration', quick ? 2 : 4);
  return {
    help: has('help'),
    quick,
    only,
    durationS,
    warmupS: quick ? 1 : Math.min(3, durationS),
    connections: number('connections', 32),
    rounds: Math.floor(number('rounds', quick ? 1 : 5)),
    explicitDuration: value('duration') !== undefined,
    explicitConnections: value('connections') !== undefined,
    tokens: Math.floor(number('tokens', quick ? 2000 : 1_000_000)),
    soakS: number('soak', quick ? 3 : 60),
    soakWarmupS: quick ? 1 : 10,
  };
}
