import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnNode, ROOT } from '@chain/testkit';

// The service's logger (the built runtime: pino on its destination) in a process whose output
// goes through a pipe into a file, as `pnpm start` runs a service: the lines logged right before
// the process ends are in the file, however it ends, and the lines of worker processes sharing
// the pipe stay whole.
const runtime = path.join(ROOT, 'packages', 'runtime', 'dist', 'index.js');

type Line = { msg: string; correlationId?: string; service: string; level: number };

/** Runs `source` as a Node program with its stdout piped into a file; its exit code and lines. */
async function runScript(source: string[]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-flush-'));
  const script = path.join(dir, 'child.js');
  fs.writeFileSync(script, source.join('\n'));
  const logFile = path.join(dir, 'svc.log');
  const child = spawnNode('svc', script, { logFile });
  child.detach();
  const code = await child.exited;
  await child.logClosed;
  const text = fs.readFileSync(logFile, 'utf8');
  return { code, text };
}

/** 2000 audit lines and a last one, then `ending`. */
async function runLogging(ending: string, setup = '') {
  const { code, text } = await runScript([
    `const { createLogger, exitOnFatalError } = require(${JSON.stringify(runtime)});`,
    `const logger = createLogger('svc');`,
    setup,
    `const audit = (fields) => logger.info(fields, 'jwt verified');`,
    `for (let i = 0; i < 2000; i++) audit({ client_id: 'c', scope: 'api_a.r', correlationId: 'id-' + i });`,
    `logger.warn({ last: true }, 'the last line');`,
    ending,
  ]);
  const lines = text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
  return { code, lines };
}

describe('the service log through a pipe, as pnpm start writes it', () => {
  const expectAll = (lines: Line[]) => {
    const audit = lines.filter((l) => l.msg === 'jwt verified');
    expect(audit.map((l) => l.correlationId)).toEqual(
      Array.from({ length: 2000 }, (_, i) => `id-${i}`),
    );
    expect(audit[0]).toMatchObject({ service: 'svc', client_id: 'c', scope: 'api_a.r' });
    expect(lines.filter((l) => l.msg === 'the last line')).toHaveLength(1);
  };

  it('a fatal error right after the last lines: every line is in the file', async () => {
    const { code, lines } = await runLogging(`throw new Error('fatal');`);
    expect(code).toBe(1);
    expectAll(lines);
  });

  it('a fatal error with exitOnFatalError (as a service runs): every line, then the fatal line, exit 1', async () => {
    const { code, lines } = await runLogging(
      `setImmediate(() => { throw new Error('fatal'); });`,
      'exitOnFatalError(logger);',
    );
    expect(code).toBe(1);
    expectAll(lines);
    expect(lines.at(-1)).toMatchObject({
      level: 60,
      msg: 'uncaught exception',
      err: expect.objectContaining({ message: 'fatal' }),
    });
  });

  it('an unhandled rejection with exitOnFatalError: every line, then the fatal line, exit 1', async () => {
    const { code, lines } = await runLogging(
      `void Promise.reject(new Error('rejected'));`,
      'exitOnFatalError(logger);',
    );
    expect(code).toBe(1);
    expectAll(lines);
    expect(lines.at(-1)).toMatchObject({ level: 60, msg: 'unhandled promise rejection' });
  });

  it('process.exit right after the last lines (the end of a graceful stop): every line', async () => {
    const { code, lines } = await runLogging('process.exit(0);');
    expect(code).toBe(0);
    expectAll(lines);
  });

  it('the event loop ends with lines pending: every line', async () => {
    const { code, lines } = await runLogging('');
    expect(code).toBe(0);
    expectAll(lines);
  });

  it('SIGTERM with the default handler right after the last lines: the lines written so far are whole', async () => {
    const { code, lines } = await runLogging(
      `setTimeout(() => process.kill(process.pid, 'SIGTERM'), 50);`,
    );
    // Killed by the signal (no exit code); what was flushed in 50 ms is every line.
    expect(code).toBeNull();
    expectAll(lines);
  });
});

/**
 * Runs `source` with its stdout on a FIFO (a pipe, as a container runtime gives a container,
 * where only writes of at most PIPE_BUF are whole) read more slowly than it is written, so that
 * the pipe is full most of the time; its exit code and stdout.
 */
async function runOnSlowPipe(source: string[]): Promise<{ code: number | null; text: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-flush-'));
  const script = path.join(dir, 'child.js');
  fs.writeFileSync(script, source.join('\n'));
  const fifo = path.join(dir, 'stdout');
  execFileSync('mkfifo', [fifo]);
  const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const writer = fs.openSync(fifo, fs.constants.O_WRONLY);
  const child = spawn(process.execPath, [script], { stdio: ['ignore', writer, 'inherit'] });
  fs.closeSync(writer);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(64 * 1024);
  // One read of at most 64 KB per millisecond, until every writer has closed the pipe (EOF).
  for (let eof = false; !eof;) {
    try {
      const n = fs.readSync(reader, buf);
      if (n === 0) eof = true;
      else chunks.push(Buffer.from(buf.subarray(0, n)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  fs.closeSync(reader);
  return { code: await exited, text: Buffer.concat(chunks).toString('utf8') };
}

describe('the lines of worker processes sharing one pipe', () => {
  it('two workers writing many lines at once: every line whole, none lost', async () => {
    // Lines of 100 to 2,100 bytes, as fast as the workers can, into the one pipe of the primary.
    const { code, text } = await runOnSlowPipe([
      `const cluster = require('node:cluster');`,
      `if (cluster.isPrimary) {`,
      `  let left = 2;`,
      `  cluster.on('exit', (w, code) => { if (code !== 0) process.exit(2); if (--left === 0) process.exit(0); });`,
      `  for (const n of [1, 2]) cluster.fork({ CHAIN_WORKER: String(n) });`,
      `} else {`,
      `  const { createLogger, flushLogger } = require(${JSON.stringify(runtime)});`,
      `  const logger = createLogger('svc');`,
      `  let i = 0;`,
      `  const burst = () => {`,
      `    for (let k = 0; k < 500 && i < 5000; k++, i++) logger.info({ n: i, pad: 'x'.repeat(50 + ((i * 37) % 2000)) }, 'line');`,
      `    if (i < 5000) setImmediate(burst);`,
      // Everything out before the end: a slow reader is not waited for more than 2 s on exit.
      `    else { flushLogger(logger, 20000); process.exit(0); }`,
      `  };`,
      `  burst();`,
      `}`,
    ]);
    expect(code).toBe(0);
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    const broken = lines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(broken.map((l) => l.slice(0, 80))).toEqual([]);
    const parsed = lines.map((l) => JSON.parse(l) as { worker: number; n: number });
    for (const worker of [1, 2]) {
      expect(parsed.filter((l) => l.worker === worker).map((l) => l.n)).toEqual(
        Array.from({ length: 5000 }, (_, i) => i),
      );
    }
  });
});
