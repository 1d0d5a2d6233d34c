import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, flushLogger, infoLineWriter, logLastLine } from '../src';
import { isoTimeClock } from '../src/iso-time';

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

describe('infoLineWriter', () => {
  afterEach(() => jest.restoreAllMocks());

  it('writes the line pino writes for logger.info(fields, message), byte for byte', () => {
    const file = path.join(tmp(), 'log');
    const fd = fs.openSync(file, 'w');
    const logger = createLogger('com.networknt.api-a-1.0.0', 'info', fd);
    let clock = Date.UTC(2026, 10, 22, 23, 59, 59, 998);
    jest.spyOn(Date, 'now').mockImplementation(() => clock);
    const audit = infoLineWriter(logger, 'jwt verified');
    const records: Record<string, unknown>[] = [
      { client_id: 'f7d42348', user_id: 'steve', scope: 'api_a.r api_a.w', correlationId: 'c-1' },
      // Undefined fields are left out; quotes, control characters, line separators, non-ASCII.
      {
        client_id: 'a"b\\c',
        user_id: undefined,
        scope: 'x\ny\u2028z\u0001',
        correlationId: 'é€😀',
      },
      { jwt: 'h.p.s', n: 3, ok: true, none: null, list: ['a', 1], obj: { k: 'v' } },
      {},
    ];
    const lines: string[] = [];
    for (const record of records) {
      for (let i = 0; i < 2; i++) {
        clock += 1; // across a second, a minute, a day and a month boundary
        audit(record);
        logger.info(record, 'jwt verified');
        lines.push(`${clock}`);
      }
    }
    flushLogger(logger);
    fs.closeSync(fd);
    const written = fs.readFileSync(file, 'utf8').split('\n');
    expect(written.pop()).toBe('');
    expect(written).toHaveLength(2 * lines.length);
    for (let i = 0; i < written.length; i += 2) {
      expect(written[i]).toBe(written[i + 1]);
      expect(JSON.parse(written[i]).time).toBe(new Date(Number(lines[i / 2])).toISOString());
    }
    expect(JSON.parse(written[2])).toMatchObject({ time: '2026-11-23T00:00:00.000Z' });
    expect(written[4]).toContain('"client_id":"a\\"b\\\\c"');
  });

  it('writes nothing when the level is above info', () => {
    const file = path.join(tmp(), 'log');
    const fd = fs.openSync(file, 'w');
    const logger = createLogger('svc', 'warn', fd);
    infoLineWriter(logger, 'jwt verified')({ client_id: 'c' });
    flushLogger(logger);
    fs.closeSync(fd);
    expect(fs.readFileSync(file, 'utf8')).toBe('');
  });
});

describe('isoTimeClock', () => {
  const check = (from: number, count: number) => {
    let ms = from;
    const clock = isoTimeClock(() => ms);
    for (let i = 0; i < count; i++, ms++) {
      if (clock() !== new Date(ms).toISOString()) {
        expect(clock()).toBe(new Date(ms).toISOString());
      }
    }
  };

  it('answers new Date(ms).toISOString() at every millisecond across second, day and year boundaries', () => {
    check(Date.UTC(2026, 10, 22, 15, 4, 58, 990), 2020); // two second boundaries
    check(Date.UTC(2026, 11, 31, 23, 59, 59, 0), 2000); // a new day, month and year
    check(Date.UTC(2028, 1, 28, 23, 59, 59, 500), 1000); // into a leap day
    check(Date.UTC(2028, 1, 29, 23, 59, 59, 500), 1000); // out of it
    check(0, 1500); // the epoch
    check(Date.UTC(9999, 11, 31, 23, 59, 59, 0), 2000); // into year +010000 (a wider year)
    check(-1500, 3000); // before 1970 (formatted whole)
  });

  it('is right when the clock jumps back and forth', () => {
    const times = [
      Date.UTC(2026, 10, 22, 15, 4, 59, 999),
      Date.UTC(2026, 10, 22, 15, 4, 58, 1),
      Date.UTC(2026, 10, 22, 15, 4, 59, 999),
      Date.UTC(2027, 0, 1, 0, 0, 0, 0),
      Date.UTC(2026, 10, 22, 15, 4, 59, 0),
    ];
    let i = 0;
    const clock = isoTimeClock(() => times[i]);
    for (i = 0; i < times.length; i++) expect(clock()).toBe(new Date(times[i]).toISOString());
  });

  it('uses Date.now by default', () => {
    const before = Date.now();
    const time = Date.parse(isoTimeClock()());
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
  });
});
