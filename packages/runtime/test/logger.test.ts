import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, logLastLine } from '../src';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-logger-'));

describe('logLastLine', () => {
  it('resolves once the last line is written', async () => {
    const file = path.join(tmp(), 'log');
    const fd = fs.openSync(file, 'w');
    const logger = createLogger('svc', 'info', fd);
    logger.info('first');
    await logLastLine(logger, 'stopped');
    const lines = fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.service, l.msg])).toEqual([
      ['svc', 'first'],
      ['svc', 'stopped'],
    ]);
    fs.closeSync(fd);
  });

  it('resolves, not hangs, when the reader of the pipe is gone (EPIPE)', async () => {
    const fifo = path.join(tmp(), 'fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const writer = fs.openSync(fifo, fs.constants.O_WRONLY);
    const logger = createLogger('svc', 'info', writer);
    logger.info('read by nobody');
    fs.closeSync(reader); // the log reader dies
    const started = Date.now();
    await logLastLine(logger, 'stopped');
    await logLastLine(logger, 'again'); // broken: returns at once
    expect(Date.now() - started).toBeLessThan(1500);
    fs.closeSync(writer);
  });

  it('logs and resolves at once for a logger on a stream', async () => {
    const lines: string[] = [];
    const logger = createLogger('svc', 'info', { write: (l: string) => void lines.push(l) });
    await logLastLine(logger, 'stopped');
    expect(JSON.parse(lines[0]).msg).toBe('stopped');
  });

  it('gives up on a reader that does not read, after the time-out', async () => {
    const fifo = path.join(tmp(), 'fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const writer = fs.openSync(fifo, fs.constants.O_WRONLY);
    const logger = createLogger('svc', 'info', writer);
    // Fill the pipe (64 KB) so that the next write waits for a reader that never reads.
    logger.info('x'.repeat(256 * 1024));
    await logLastLine(logger, 'stopped', 200);
    fs.closeSync(reader);
    fs.closeSync(writer);
  });
});
