import fs from 'node:fs';
import path from 'node:path';
import { runToExit, ROOT } from '@chain/testkit';

// Smoke of `pnpm bench`: the quick mode starts the bare chain, the Fastify peer and the service
// chain in its shipped configuration (with a real InfluxDB) as processes, loads them for a
// second, runs the route, soak and token cases beside them, and prints the table and the chart. No figure is asserted: this
// machine is shared and noisy; the figures live in docs/benchmarks.md.
vi.setConfig({ testTimeout: 90000, hookTimeout: 90000 });

const run = (args: string[]) =>
  runToExit(path.join(ROOT, 'scripts', 'bench', 'run.mjs'), { args, cwd: ROOT, timeoutMs: 85000 });

/** The JSON a run wrote, named on its stdout. */
const writtenResult = <T>(stdout: string): T => {
  const written = /written to (\S+\.json)/.exec(stdout)?.[1];
  return JSON.parse(fs.readFileSync(path.resolve(ROOT, written!), 'utf8')) as T;
};

describe('pnpm bench --quick', () => {
  it('runs the baseline, the peer and the shipped chain and prints the table', async () => {
    const { code, stdout, stderr } = await run(['--quick']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(
      '| case | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB | baseline | ratio | notes |',
    );
    expect(stdout).toMatch(
      /^\| baseline \| \d+ \| [\d.]+ \| [\d.]+ \| \d+ \| a \d+, b \d+, c \d+, d \d+ \| – \| – \|/m,
    );
    for (const name of ['peer', 'shipped']) {
      expect(stdout).toMatch(
        new RegExp(
          `^\\| ${name} \\| \\d+ \\| [\\d.]+ \\| [\\d.]+ \\| \\d+ \\| a \\d+, b \\d+, c \\d+, d \\d+ \\| baseline \\| [\\d.]+ \\|`,
          'm',
        ),
      );
    }
    expect(stdout).toContain('chain security on (cache) / security off: – (target >= 0.85)');
    const chart = /written to \S+\.json and (\S+\.svg)/.exec(stdout)?.[1];
    expect(fs.readFileSync(path.resolve(ROOT, chart!), 'utf8')).toMatch(
      /^<svg[^>]*>[\s\S]*shipped[\s\S]*<\/svg>\s*$/,
    );
    const result = writtenResult<{
      rows: { case: string; failed: number }[];
    }>(stdout);
    expect(result.rows.map((r) => [r.case, r.failed ?? 0])).toEqual([
      ['baseline', 0],
      ['peer', 0],
      ['shipped', 0],
      ['route: none', 0],
      ['route: chain-security cache on', 0],
      ['route: chain-security cache off', 0],
      ['route: express-oauth2-jwt-bearer', 0],
      ['route: fastify: none', 0],
      ['route: fastify: chain-security cache on', 0],
      ['route: fastify: chain-security cache off', 0],
      ['route: fastify: @fastify/jwt cache on', 0],
      ['route: fastify: @fastify/jwt cache off', 0],
      ['soak', 0],
      ['tokens', 0],
    ]);
  });

  it('loads the cases of a round at the same time with --together', async () => {
    const { code, stdout, stderr } = await run([
      '--quick',
      '--together',
      '--only',
      'baseline,peer',
    ]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/round 1\/1 baseline: \d+ req\/s/);
    expect(stdout).toMatch(/round 1\/1 peer: \d+ req\/s/);
    expect(stdout).toContain(
      'the cases of a round loaded at the same time (--together): read CPU per request',
    );
    const result = writtenResult<{
      options: { together: boolean };
      rows: { case: string; failed: number; cpuRounds: number[] }[];
    }>(stdout);
    expect(result.options.together).toBe(true);
    expect(result.rows.map((r) => [r.case, r.failed, r.cpuRounds.length])).toEqual([
      ['baseline', 0, 1],
      ['peer', 0, 1],
    ]);
  });

  it('runs the shipped chain on two-way TLS with certificate-bound tokens (shipped-mtls)', async () => {
    const { code, stdout, stderr } = await run(['--quick', '--only', 'shipped-mtls']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(
      /round 1\/1 shipped-mtls: \d+ req\/s, p50 [\d.]+ ms, p99 [\d.]+ ms, 0 failed/,
    );
    const result = writtenResult<{
      rows: { case: string; failed: number }[];
    }>(stdout);
    expect(result.rows.map((r) => [r.case, r.failed])).toEqual([['shipped-mtls', 0]]);
  });

  it('runs the shipped chain beside itself with token exchange at every hop (shipped-exchange)', async () => {
    const { code, stdout, stderr } = await run(['--quick', '--only', 'shipped,shipped-exchange']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(
      /round 1\/1 shipped-exchange: \d+ req\/s, p50 [\d.]+ ms, p99 [\d.]+ ms, 0 failed/,
    );
    expect(stdout).toMatch(
      /info +shipped: token exchange at every hop \(cache warm\) \/ shipped: [\d.]+ \(target none\); in CPU per request [\d.]+/,
    );
    const result = writtenResult<{
      rows: { case: string; failed: number }[];
    }>(stdout);
    expect(result.rows.map((r) => [r.case, r.failed])).toEqual([
      ['shipped', 0],
      ['shipped-exchange', 0],
    ]);
  });

  it('runs the peer doing all our hops do (peer-full) beside the peer', async () => {
    const { code, stdout, stderr } = await run(['--quick', '--only', 'peer,peer-full']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(
      /^\| peer-full \| \d+ \| [\d.]+ \| [\d.]+ \| \d+ \| a \d+, b \d+, c \d+, d \d+ \| baseline \| – \|/m,
    );
    expect(stdout).toContain(
      'shipped configuration / peer-full (the peer doing all our hops do): – (target >= 1.1); in CPU per request – (target >= 1.1)',
    );
    const result = writtenResult<{
      rows: { case: string; failed: number }[];
    }>(stdout);
    expect(result.rows.map((r) => [r.case, r.failed])).toEqual([
      ['peer', 0],
      ['peer-full', 0],
    ]);
  });

  it("runs another checkout's services as shipped-base with --base", async () => {
    // This checkout as its own base: the case starts the services under the folder given.
    const { code, stdout, stderr } = await run([
      '--quick',
      '--only',
      'shipped-base',
      '--base',
      ROOT,
    ]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/round 1\/1 shipped-base: \d+ req\/s/);
    const result = writtenResult<{
      rows: { case: string; failed: number }[];
    }>(stdout);
    expect(result.rows.map((r) => [r.case, r.failed])).toEqual([['shipped-base', 0]]);
  });

  it('refuses shipped-base without --base, and a --base folder without built services (exit 2)', async () => {
    const missing = await run(['--only', 'shipped-base']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      'shipped-base needs --base DIR: a built checkout to compare with',
    );
    const unbuilt = await run([
      '--only',
      'shipped,shipped-base',
      '--base',
      '/nonexistent-checkout',
    ]);
    expect(unbuilt.code).toBe(2);
    expect(unbuilt.stderr).toContain(
      'missing /nonexistent-checkout/services/api-a/dist/index.js, /nonexistent-checkout/services/api-b/dist/index.js',
    );
    expect(unbuilt.stderr).toContain('run pnpm certs && pnpm build in /nonexistent-checkout first');
  });

  it('refuses an unknown case with the list of cases (exit 2)', async () => {
    const { code, stderr } = await run(['--only', 'nonsense']);
    expect(code).toBe(2);
    expect(stderr).toContain(
      'unknown case(s) nonsense; cases: baseline, peer, peer-h2, chain-open',
    );
  });
});
