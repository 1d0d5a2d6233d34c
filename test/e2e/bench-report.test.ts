import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '@chain/testkit';

// The ratios the bench's targets are judged on (scripts/bench/lib/report.mjs, an ES module: run
// in a Node process of its own). Rows measured in the same rotating rounds are compared round by
// round and the median of those ratios is taken, in req/s and in CPU per request alike; rows
// without rounds of the same length fall back to the ratio of their totals.
const REPORT = pathToFileURL(path.join(ROOT, 'scripts', 'bench', 'lib', 'report.mjs')).href;

function evaluate(expression: string): unknown {
  const out = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import * as r from ${JSON.stringify(REPORT)}; console.log(JSON.stringify(${expression}));`,
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(out);
}

const shipped = {
  case: 'shipped',
  rps: 2000,
  rounds: [1000, 2000, 3000],
  cpuUsPerRequest: 800,
  cpuRounds: [1000, 800, 500],
};
const off = {
  case: 'shipped-no-metrics',
  rps: 2200,
  rounds: [1100, 2000, 3300],
  cpuUsPerRequest: 700,
  cpuRounds: [900, 720, 560],
};

describe('bench report ratios', () => {
  it('takes the median of the per-round ratios in req/s and in CPU per request', () => {
    // req/s: 1000/1100, 2000/2000, 3000/3300 → median 0.909...; CPU (base / row): 0.9, 0.9, 1.12.
    expect(
      evaluate(
        `[r.rpsRatio(${JSON.stringify(shipped)}, ${JSON.stringify(off)}), r.cpuRatio(${JSON.stringify(shipped)}, ${JSON.stringify(off)})]`,
      ),
    ).toEqual([1000 / 1100, 0.9]);
  });

  it('falls back to the totals when the rows were not measured in the same rounds', () => {
    const sub = { case: 'workers', rps: 3000, cpuUsPerRequest: 50 };
    const base = { case: 'one worker', rps: 2000, cpuUsPerRequest: 60, cpuRounds: [60, 60] };
    expect(
      evaluate(
        `[r.rpsRatio(${JSON.stringify(sub)}, ${JSON.stringify(base)}), r.cpuRatio(${JSON.stringify(sub)}, ${JSON.stringify(base)})]`,
      ),
    ).toEqual([1.5, 1.2]);
  });

  it('has no CPU ratio when a row has no CPU figure, and none from a round without requests', () => {
    const missing = { case: 'x', rps: 10 };
    const zeroRound = { ...shipped, cpuRounds: [1000, null, 500] };
    expect(
      evaluate(
        `[r.cpuRatio(${JSON.stringify(missing)}, ${JSON.stringify(off)}), r.cpuRatio(${JSON.stringify(zeroRound)}, ${JSON.stringify(off)})]`,
      ),
    ).toEqual([null, 700 / 800]);
  });

  it('judges the metrics target on the same-round ratios', () => {
    const goals = evaluate(
      `r.targets(${JSON.stringify([shipped, off])}).find((t) => t.what === 'shipped: metrics on / metrics off')`,
    );
    expect(goals).toEqual({
      what: 'shipped: metrics on / metrics off',
      value: 1000 / 1100,
      target: '>= 0.95',
      verdict: 'MISS',
      cpuRatio: 0.9,
    });
  });

  it('judges shipped / peer-full in req/s and in CPU per request alike', () => {
    const peerFull = (rounds: number[], cpuRounds: number[]) => ({
      case: 'peer-full',
      rps: rounds[1],
      rounds,
      cpuUsPerRequest: cpuRounds[1],
      cpuRounds,
    });
    const verdict = (row: object) =>
      evaluate(
        `r.targets(${JSON.stringify([shipped, row])}).find((t) => t.what.includes('peer-full'))`,
      );
    // req/s 1.25 and CPU 1.25 (base / row): both reach 1.1.
    expect(verdict(peerFull([800, 1600, 2400], [1250, 1000, 625]))).toEqual({
      what: 'shipped configuration / peer-full (the peer doing all our hops do)',
      value: 1.25,
      target: '>= 1.1',
      verdict: 'PASS',
      cpuRatio: 1.25,
      cpuTarget: '>= 1.1',
    });
    // req/s 1.25 but CPU 1.0: missed.
    expect(verdict(peerFull([800, 1600, 2400], [1000, 800, 500]))).toMatchObject({
      value: 1.25,
      verdict: 'MISS',
      cpuRatio: 1,
    });
    // CPU 1.25 but req/s 1.0: missed.
    expect(verdict(peerFull([1000, 2000, 3000], [1250, 1000, 625]))).toMatchObject({
      value: 1,
      verdict: 'MISS',
      cpuRatio: 1.25,
    });
  });
});
