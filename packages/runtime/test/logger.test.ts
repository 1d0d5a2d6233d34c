import { execFileSync } from 'node:child_process';
import cluster from 'node:cluster';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, exitOnFatalError, flushLogger, type Logger } from '../src/index.js';
import { replaceProperty } from './support.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-logger-'));
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A file and a logger writing to it through its file descriptor. */
function fileLogger(service = 'svc', level = 'info') {
  const file = path.join(tmp(), 'log');
  const fd = fs.openSync(file, 'w');
  const logger = createLogger(service, level, fd);
  return { logger, text: () => fs.readFileSync(file, 'utf8'), close: () => fs.closeSync(fd) };
}

/** A FIFO with a reader that reads only when told (`read()`), and the writer's fd. */
function fifo() {
  const file = path.join(tmp(), 'fifo');
  execFileSync('mkfifo', [file]);
  const reader = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  // Blocking, as a pipe a process inherits usually is: the logger must make it non-blocking.
  const writer = fs.openSync(file, fs.constants.O_WRONLY);
  const buf = Buffer.alloc(1024 * 1024);
  const chunks: string[] = [];
  let taken = 0;
  const readNow = () => {
    for (;;) {
      let n: number;
      try {
        n = fs.readSync(reader, buf);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') break;
        throw err;
      }
      if (n === 0) break;
      chunks.push(buf.toString('latin1', 0, n));
    }
  };
  return {
    writer,
    /** Reads what is there now; returns everything read so far. */
    read(): string {
      readNow();
      return Buffer.from(chunks.join(''), 'latin1').toString('utf8');
    },
    /** Reads what is there now; returns what was read since the last call (bytes as latin1). */
    take(): string {
      readNow();
      const fresh = chunks.slice(taken).join('');
      taken = chunks.length;
      return fresh;
    },
    closeReader: () => fs.closeSync(reader),
    close() {
      try {
        fs.closeSync(reader);
      } catch {
        // closed already
      }
      fs.closeSync(writer);
    },
  };
}

const parse = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Every write(2) the destination makes, recorded and passed through. */
function recordWrites() {
  const writes: string[] = [];
  const original = fs.writeSync.bind(fs);
  const spy = vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, data: unknown) => {
    const n = original(fd, data as string);
    if (n > 0) writes.push(String(data));
    return n;
  }) as unknown as typeof fs.writeSync);
  return { writes, restore: () => spy.mockRestore() };
}

/** Resolves once `done()` holds, looking every few milliseconds (at most `ms`). */
async function until(done: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

afterEach(() => vi.restoreAllMocks());

describe('createLogger on a file descriptor', () => {
  it('writes one JSON line per event: level, ISO time, service, the fields, msg', () => {
    const log = fileLogger('com.networknt.api-a-1.0.0');
    log.logger.info({ client_id: 'c', scope: 'api_a.r' }, 'jwt verified');
    log.logger.warn('second');
    flushLogger(log.logger);
    const written = log.text().split('\n');
    expect(written.pop()).toBe('');
    expect(written[0]).toMatch(
      /^\{"level":30,"time":"[^"]+","service":"com\.networknt\.api-a-1\.0\.0","client_id":"c","scope":"api_a\.r","msg":"jwt verified"\}$/,
    );
    const lines = written.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0].time).toMatch(ISO);
    expect(Math.abs(Date.parse(lines[0].time as string) - Date.now())).toBeLessThan(5000);
    expect(lines[1]).toMatchObject({
      level: 40,
      service: 'com.networknt.api-a-1.0.0',
      msg: 'second',
    });
    expect(lines[1]).not.toHaveProperty('worker');
    log.close();
  });

  it('names the worker in every line of a worker process', () => {
    replaceProperty(cluster, 'isWorker', true);
    replaceProperty(process, 'env', { ...process.env, CHAIN_WORKER: '2' });
    const log = fileLogger();
    log.logger.info('from a worker');
    flushLogger(log.logger);
    expect(parse(log.text())).toEqual([
      expect.objectContaining({ service: 'svc', worker: 2, msg: 'from a worker' }),
    ]);
    log.close();
  });

  it('writes a line after a quiet spell at the end of its turn; one right after a write within 50 ms or so', async () => {
    // The clock of the quiet spell stands still: the second line comes right after the write.
    vi.spyOn(performance, 'now').mockReturnValue(1000);
    const log = fileLogger();
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    log.logger.info('after a quiet spell');
    expect(log.text()).toBe(''); // not within the log call
    await turn();
    expect(parse(log.text()).map((l) => l.msg)).toEqual(['after a quiet spell']);
    // Right after a write: the line waits for company, not written at the end of its turn.
    const logged = Date.now();
    log.logger.info('right after');
    await turn();
    expect(parse(log.text())).toHaveLength(1);
    await until(() => parse(log.text()).length === 2);
    expect(Date.now() - logged).toBeLessThan(1000);
    expect(parse(log.text()).map((l) => l.msg)).toEqual(['after a quiet spell', 'right after']);
    log.close();
  });

  it.each([
    ['in a worker, at most PIPE_BUF (4096 bytes): the workers share the pipe', true, 4096, 3072],
    ['in a process alone on its output, at most 32 KB', false, 32768, 16384],
  ])('writes a burst in few writes of whole lines %s', (_, worker, max, min) => {
    if (worker) {
      replaceProperty(cluster, 'isWorker', true);
      replaceProperty(process, 'env', { ...process.env, CHAIN_WORKER: '1' });
    }
    const log = fileLogger();
    const recorded = recordWrites();
    for (let i = 0; i < 1000; i++) log.logger.info({ n: i, pad: 'x'.repeat(250) }, 'line');
    flushLogger(log.logger);
    recorded.restore();
    expect(parse(log.text()).map((l) => l.n)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    const bytes = Buffer.byteLength(log.text());
    expect(recorded.writes.join('')).toBe(log.text());
    for (const write of recorded.writes) {
      expect(write.endsWith('\n')).toBe(true);
      expect(Buffer.byteLength(write)).toBeLessThanOrEqual(max);
    }
    // About 300 KB: a write per 3 KB in a worker and per 16 KB otherwise, not one per line.
    expect(recorded.writes.length).toBeLessThanOrEqual(Math.ceil(bytes / min) + 1);
    log.close();
  });

  it('a full pipe is not tried again at every line, only at the next flush', () => {
    const pipe = fifo();
    const logger = createLogger('svc', 'info', pipe.writer);
    const attempts = vi.spyOn(fs, 'writeSync');
    // Far more than a pipe holds (64 KB): the pipe fills, then 1,000 lines more wait.
    for (let i = 0; i < 1200; i++) logger.info({ n: i, pad: 'x'.repeat(300) }, 'line');
    const before = attempts.mock.calls.length;
    for (let i = 1200; i < 2200; i++) logger.info({ n: i, pad: 'x'.repeat(300) }, 'line');
    expect(attempts.mock.calls.length - before).toBe(0);
    attempts.mockRestore();
    // Nothing lost: the held lines go once the reader reads.
    let all = '';
    for (let round = 0; round < 200 && !all.includes('"n":2199,'); round++) {
      pipe.take();
      flushLogger(logger, 0);
      all = pipe.read();
    }
    expect(parse(pipe.read()).map((l) => l.n)).toEqual(Array.from({ length: 2200 }, (_, i) => i));
    pipe.close();
  });

  it('a reader that does not keep up never blocks the event loop; its lines arrive whole and in order', async () => {
    const pipe = fifo();
    const logger = createLogger('svc', 'info', pipe.writer);
    // Far more than a pipe holds (64 KB).
    for (let i = 0; i < 2000; i++) logger.info({ n: i, pad: 'x'.repeat(300) }, 'line');
    const turned = Date.now();
    await new Promise((resolve) => setImmediate(resolve));
    expect(Date.now() - turned).toBeLessThan(500);
    flushLogger(logger, 0); // one attempt: the pipe is full
    expect(pipe.read().length).toBeGreaterThan(0);
    let count = 0;
    await until(() => {
      count += pipe.take().split('\n').length - 1;
      return count === 2000;
    }, 10_000);
    expect(parse(pipe.read()).map((l) => l.n)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    pipe.close();
  });

  it('beyond 32 MB waiting for the reader, lines are dropped and counted in a line of their own', async () => {
    const pipe = fifo();
    const logger = createLogger('svc', 'info', pipe.writer);
    const big = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 40; i++) logger.info({ n: i, big }, 'big');
    // The reader now reads; each flush writes what the pipe takes.
    let last = '';
    for (let i = 0; i < 10_000 && !last.includes('log lines dropped'); i++) {
      flushLogger(logger, 0);
      last = pipe.take();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const lines = parse(pipe.read());
    const kept = lines.filter((l) => l.msg === 'big');
    const notice = lines.find(
      (l) => l.msg === 'log lines dropped: the reader of the log did not keep up',
    );
    expect(notice).toMatchObject({ level: 40, service: 'svc' });
    expect(notice!.dropped).toBeGreaterThan(0);
    expect(kept.length + (notice!.dropped as number)).toBe(40);
    // At most 32 MB were held: the ones kept are the first ones, whole.
    expect(kept.length).toBeLessThanOrEqual(32);
    expect(kept.map((l) => l.n)).toEqual(Array.from({ length: kept.length }, (_, i) => i));
    expect(kept.every((l) => l.big === big)).toBe(true);
    pipe.close();
  });

  it('a reader that is gone (EPIPE) ends logging, not the process', () => {
    const pipe = fifo();
    const logger = createLogger('svc', 'info', pipe.writer);
    pipe.closeReader(); // the log reader dies
    const recorded = recordWrites();
    logger.info('read by nobody');
    const started = Date.now();
    flushLogger(logger, 5000); // EPIPE: returns at once, does not wait for a reader
    expect(Date.now() - started).toBeLessThan(1000);
    const attempts = vi.mocked(fs.writeSync).mock.calls.length;
    expect(attempts).toBeGreaterThan(0);
    // Logging has ended: a line is not even tried.
    for (let i = 0; i < 10_000; i++) logger.info({ pad: 'x'.repeat(100) }, 'more');
    flushLogger(logger);
    expect(vi.mocked(fs.writeSync).mock.calls.length).toBe(attempts);
    expect(recorded.writes).toEqual([]);
    recorded.restore();
    fs.closeSync(pipe.writer);
  });

  it('flushLogger gives up on a reader that does not read, after its time-out', () => {
    const pipe = fifo();
    const logger = createLogger('svc', 'info', pipe.writer);
    logger.info('x'.repeat(256 * 1024)); // more than the pipe holds
    const started = Date.now();
    flushLogger(logger, 200);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(190);
    expect(waited).toBeLessThan(1000);
    pipe.close();
  });

  it('flushLogger of a logger on a stream writes nothing itself', () => {
    const lines: string[] = [];
    const logger = createLogger('svc', 'info', { write: (l: string) => void lines.push(l) });
    logger.info('on a stream');
    flushLogger(logger);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['on a stream']);
  });
});

describe('credentials in a log line', () => {
  const SECRET = 'secret-3f1b';
  function capture(): { logger: Logger; lines: () => string[] } {
    const raw: string[] = [];
    const logger = createLogger('svc', 'info', { write: (l: string) => void raw.push(l) });
    return { logger, lines: () => raw };
  }

  const headers = ['authorization', 'Authorization', 'x-scope-token', 'X-Scope-Token'];
  const secrets = ['client_secret', 'password', 'influxdbPass'];
  const at = (container: string[], name: string) => {
    const record: Record<string, unknown> = { [name]: `Bearer ${SECRET}`, kept: 'visible' };
    return container.reduceRight<Record<string, unknown>>(
      (inner, key) => ({ [key]: inner }),
      record,
    );
  };

  it.each(
    [
      ...secrets.map((name) => [[], name] as const),
      ...headers.flatMap((name) => [
        [['headers'], name] as const,
        [['req', 'headers'], name] as const,
      ]),
      ...[...headers, ...secrets].map((name) => [['err'], name] as const),
    ].map(([container, name]) => [[...container, name].join('.'), container, name] as const),
  )('%s is redacted', (_, container, name) => {
    const { logger, lines } = capture();
    logger.info(at([...container], name), 'a line');
    const line = lines()[0];
    expect(line).not.toContain(SECRET);
    let value: unknown = JSON.parse(line);
    for (const key of container) value = (value as Record<string, unknown>)[key];
    expect(value).toMatchObject({ [name]: '[redacted]' });
    if (container.length) expect(value).toMatchObject({ kept: 'visible' });
  });

  it("a token's summary under a header's name at the top of a line stays (the chain's trace line)", () => {
    const { logger, lines } = capture();
    const summary = { fingerprint: '7657d9035b543630', client_id: 'chain-user' };
    logger.info({ authorization: summary, scopeToken: summary }, 'chain request');
    expect(JSON.parse(lines()[0])).toMatchObject({ authorization: summary, scopeToken: summary });
  });

  it('an error with a credential of its own has it redacted', () => {
    const { logger, lines } = capture();
    logger.error(
      { err: Object.assign(new Error('token request failed'), { client_secret: SECRET }) },
      'x',
    );
    expect(lines()[0]).not.toContain(SECRET);
    expect(JSON.parse(lines()[0]).err).toMatchObject({
      message: 'token request failed',
      client_secret: '[redacted]',
    });
  });

  it('the audit line keeps the token that security.yml logJwtToken asks for, and nothing else is touched', () => {
    const { logger, lines } = capture();
    const record = {
      jwt: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzdGV2ZSJ9.c2ln',
      client_id: 'f7d42348',
      user_id: 'steve',
      scope: 'api_a.r api_a.w',
      correlationId: 'c-1',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    };
    logger.info(record, 'jwt verified');
    logger.info({ ...record, jwt: undefined }, 'jwt verified');
    const [withToken, without] = lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(withToken).toMatchObject({ ...record, msg: 'jwt verified' });
    expect(without).not.toHaveProperty('jwt');
  });
});

describe('exitOnFatalError', () => {
  it('logs a fatal line with the error, then exits 1; installed once', () => {
    const raw: string[] = [];
    const logger = createLogger('svc', 'info', { write: (l: string) => void raw.push(l) });
    const before = process.listeners('uncaughtException');
    exitOnFatalError(logger);
    exitOnFatalError(logger);
    const added = process.listeners('uncaughtException').filter((l) => !before.includes(l));
    expect(added).toHaveLength(1);
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    try {
      added[0](new Error('boom'), 'uncaughtException');
      added[0](new Error('rejected'), 'unhandledRejection');
    } finally {
      process.off('uncaughtException', added[0]);
    }
    expect(exit.mock.calls).toEqual([[1], [1]]);
    expect(raw.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        level: 60,
        msg: 'uncaught exception',
        err: expect.objectContaining({ type: 'Error', message: 'boom' }),
      }),
      expect.objectContaining({
        level: 60,
        msg: 'unhandled promise rejection',
        err: expect.objectContaining({ message: 'rejected' }),
      }),
    ]);
  });
});
