import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ROOT } from '../support/service-process';

// `pnpm start` (scripts/start.mjs, with --no-build: the test command has built) on the local
// run's fixed ports: how it ends when a service cannot start, or stops by itself.
jest.setTimeout(90000);

function runStart() {
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts', 'start.mjs'), '--no-build'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const listeners: (() => void)[] = [];
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    listeners.forEach((l) => l());
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  /** Resolves once stdout holds `text` (or rejects when the runner ends first). */
  const printed = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => stdout.includes(text) && resolve();
      listeners.push(check);
      check();
      void exited.then(() => reject(new Error(`the runner ended first:\n${stdout}\n${stderr}`)));
    });
  return { child, exited, printed, out: () => stdout, err: () => stderr };
}

describe('pnpm start', () => {
  it('stops cleanly, without "Try it", when a service cannot listen (EADDRINUSE)', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(7444, '127.0.0.1', resolve));
    try {
      const run = runStart();
      expect(await run.exited).toBe(1);
      expect(run.out()).toContain('✓ token-server');
      expect(run.out()).not.toContain('Try it');
      expect(run.out()).toContain('all services stopped');
      expect(run.err()).toMatch(
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
    await run.printed('Ctrl-C stops everything.');
    const started = fs
      .readFileSync(log, 'utf8')
      .split(marker)[1]
      .split('\n')
      .find((l) => l.includes('"msg":"api-d started"'));
    const pid = (JSON.parse(started ?? '{}') as { pid?: number }).pid;
    expect(pid).toEqual(expect.any(Number));
    process.kill(pid!, 'SIGTERM'); // api-d stops by itself (exit 0)
    expect(await run.exited).toBe(0);
    expect(run.out()).toContain('api-d stopped (exit 0)');
    expect(run.err()).toBe('');
    const text = fs.readFileSync(log, 'utf8');
    expect(text).toContain(marker);
    expect(text.slice(text.indexOf(marker))).toMatch(
      /"service":"pnpm-start","msg":"starting api-d"/,
    );
  });
});
