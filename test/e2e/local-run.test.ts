import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawnNode } from '../../scripts/lib/processes.cjs';
import { ROOT } from '../support/service-process';

// `pnpm start` (scripts/start.mjs, with --no-build: the test command has built) on the local
// run's fixed ports: how it ends when a service cannot start, or stops by itself.
jest.setTimeout(90000);

const runStart = () =>
  spawnNode('pnpm start', path.join(ROOT, 'scripts', 'start.mjs'), {
    args: ['--no-build'],
    cwd: ROOT,
  });

describe('pnpm start', () => {
  it('stops cleanly, without "Try it", when a service cannot listen (EADDRINUSE)', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(7444, '127.0.0.1', resolve));
    try {
      const run = runStart();
      expect(await run.exited).toBe(1);
      expect(run.stdout()).toContain('✓ token-server');
      expect(run.stdout()).not.toContain('Try it');
      expect(run.stdout()).toContain('all services stopped');
      expect(run.stderr()).toMatch(
        /cannot start: api-d exited with code 1 before listening\nCannot start: listen EADDRINUSE/,
      );
    } finally {
      squatter.close();
    }
  });

  it('reports a service that exits with code 0 as a stop, appending to the logs of earlier runs', async () => {
    const log = path.join(ROOT, '.run', 'logs', 'api-d.log');
    fs.mkdirSync(path.dirname(log), { recursive: true });
    const marker = `{"msg":"earlier run ${Date.now()}"}\n`;
    fs.appendFileSync(log, marker);
    const run = runStart();
    await run.waitForLine((l) => l.includes('Ctrl-C stops everything.'), 30000);
    const started = fs
      .readFileSync(log, 'utf8')
      .split(marker)[1]
      .split('\n')
      .find((l) => l.includes('"msg":"api-d started"'));
    const pid = (JSON.parse(started ?? '{}') as { pid?: number }).pid;
    expect(pid).toEqual(expect.any(Number));
    process.kill(pid!, 'SIGTERM'); // api-d stops by itself (exit 0)
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toContain('api-d stopped (exit 0)');
    expect(run.stderr()).toBe('');
    const text = fs.readFileSync(log, 'utf8');
    expect(text).toContain(marker);
    expect(text.slice(text.indexOf(marker))).toMatch(
      /"service":"pnpm-start","msg":"starting api-d"/,
    );
  });
});
