import fs from 'node:fs';
import path from 'node:path';
import { runToExit } from '../../scripts/lib/processes.cjs';
import { ROOT } from '../support/service-process';

// Smoke of `pnpm bench`: the quick mode starts the bare chain and the service chain as
// processes, loads them for a second or two and prints the table. No figure is asserted: this
// machine is shared and noisy; the figures live in docs/benchmarks.md.
jest.setTimeout(90000);

const run = (args: string[]) =>
  runToExit(path.join(ROOT, 'scripts', 'bench', 'run.mjs'), { args, cwd: ROOT, timeoutMs: 85000 });

describe('pnpm bench --quick', () => {
  it('runs the baseline and the open chain and prints the table', async () => {
    const { code, stdout, stderr } = await run(['--quick', '--only', 'baseline,chain-open']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(
      '| case | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB | baseline | ratio | notes |',
    );
    expect(stdout).toMatch(
      /^\| baseline \| \d+ \| [\d.]+ \| [\d.]+ \| \d+ \| a \d+, b \d+, c \d+, d \d+ \| – \| – \|/m,
    );
    expect(stdout).toMatch(
      /^\| chain-open \| \d+ \| [\d.]+ \| [\d.]+ \| \d+ \| a \d+, b \d+, c \d+, d \d+ \| baseline \| [\d.]+ \|/m,
    );
    expect(stdout).toContain('chain security on (cache) / security off: – (target >= 0.85)');
    const written = /written to (\S+\.json)/.exec(stdout)?.[1];
    const result = JSON.parse(fs.readFileSync(path.resolve(ROOT, written!), 'utf8')) as {
      rows: { case: string; failed: number }[];
    };
    expect(result.rows.map((r) => [r.case, r.failed])).toEqual([
      ['baseline', 0],
      ['chain-open', 0],
    ]);
  });

  it('refuses an unknown case with the list of cases (exit 2)', async () => {
    const { code, stderr } = await run(['--only', 'nonsense']);
    expect(code).toBe(2);
    expect(stderr).toContain('unknown case(s) nonsense; cases: baseline, chain-open');
  });
});
