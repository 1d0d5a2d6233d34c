import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { LogStream } from '../src';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-log-stream-'));
const line = (i: number, pad = 0) => `${JSON.stringify({ n: i, pad: 'x'.repeat(pad) })}\n`;
const drained = (stream: LogStream) =>
  new Promise<void>((resolve) => stream.once('drain', resolve));

/** A FIFO with a reader that reads only when told (`read()`), and the writer's fd. */
function fifo() {
  const file = path.join(tmp(), 'fifo');
  execFileSync('mkfifo', [file]);
  const reader = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  // Blocking, as a pipe a process inherits usually is: LogStream must make it non-blocking.
  const writer = fs.openSync(file, fs.constants.O_WRONLY);
  const buf = Buffer.alloc(1024 * 1024);
  let text = '';
  return {
    writer,
    /** Reads what is there now; returns everything read so far. */
    read(): string {
      for (;;) {
        let n = 0;
        try {
          n = fs.readSync(reader, buf);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN') break;
          throw err;
        }
        if (n === 0) break;
        text += buf.toString('utf8', 0, n);
      }
      return text;
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

describe('LogStream', () => {
  it('writes the lines of a burst in few writes of whole lines, each at most maxWriteBytes', async () => {
    const file = path.join(tmp(), 'log');
    const fd = fs.openSync(file, 'w');
    const writes: number[] = [];
    // Every write the stream makes, recorded and passed through.
    const original = fs.writeSync.bind(fs);
    const recorder = jest.spyOn(fs, 'writeSync').mockImplementation(((
      target: number,
      data: Buffer,
    ) => {
      writes.push(data.length);
      expect(data.toString('utf8').endsWith('\n')).toBe(true);
      return original(target, data);
    }) as unknown as typeof fs.writeSync);
    const stream = new LogStream(fd, { maxWriteBytes: 4096 });
    const lines = Array.from({ length: 100 }, (_, i) => line(i, 200));
    for (const l of lines) stream.write(l);
    await drained(stream);
    recorder.mockRestore();
    expect(fs.readFileSync(file, 'utf8')).toBe(lines.join(''));
    // 100 lines of about 220 bytes: 6 writes of at most 4096 bytes, not 100.
    expect(writes.length).toBeLessThanOrEqual(7);
    expect(Math.max(...writes)).toBeLessThanOrEqual(4096);
    fs.closeSync(fd);
  });

  it('a single line waits at most flushMs', async () => {
    const file = path.join(tmp(), 'log');
    const fd = fs.openSync(file, 'w');
    const stream = new LogStream(fd, { flushMs: 20 });
    const started = Date.now();
    stream.write(line(1));
    expect(fs.readFileSync(file, 'utf8')).toBe(''); // not yet: it waits for company
    await drained(stream);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(fs.readFileSync(file, 'utf8')).toBe(line(1));
    fs.closeSync(fd);
  });

  it('by default a line after a quiet spell is written within the turn; the next ones wait minIntervalMs', async () => {
    const file = path.join(tmp(), 'log');
    const fd = fs.openSync(file, 'w');
    const stream = new LogStream(fd, { minIntervalMs: 200 });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    // A burst in one turn after a quiet spell: written at the end of that turn.
    for (let i = 0; i < 10; i++) stream.write(line(i));
    await turn();
    const burst = Array.from({ length: 10 }, (_, i) => line(i)).join('');
    expect(fs.readFileSync(file, 'utf8')).toBe(burst);
    // Right after a write: the next line waits for company (not written at the end of its turn).
    const written = performance.now();
    stream.write(line(10));
    await turn();
    expect(fs.readFileSync(file, 'utf8')).toBe(burst);
    await drained(stream);
    expect(fs.readFileSync(file, 'utf8')).toBe(burst + line(10));
    expect(performance.now() - written).toBeGreaterThanOrEqual(150);
    fs.closeSync(fd);
  });

  it('by default holds the lines after a write 5 ms, and 50 ms while 1,000 lines/s or more come', async () => {
    const file = path.join(tmp(), 'log');
    const fd = fs.openSync(file, 'w');
    const stream = new LogStream(fd);
    let n = 0;
    /** Writes `count` lines now; resolves when they are out, with the ms since `from`. */
    const batch = async (count: number, from: number) => {
      for (let i = 0; i < count; i++) stream.write(line(n++));
      await drained(stream);
      return performance.now() - from;
    };
    // A trickle: a line after a quiet spell goes out in its turn, the next one within ~5 ms.
    await batch(1, performance.now());
    expect(await batch(1, performance.now())).toBeLessThan(40);
    // Sustained load: batches of 20 lines every ~5 ms (about 4,000 lines/s).
    for (let i = 0; i < 3; i++) await batch(20, performance.now());
    // Now a line waits for company about 50 ms.
    const held = await batch(1, performance.now());
    expect(held).toBeGreaterThanOrEqual(44);
    expect(held).toBeLessThan(1000);
    // That batch was one line in 50 ms: the load is over, the next line waits ~5 ms again.
    expect(await batch(1, performance.now())).toBeLessThan(40);
    expect(fs.readFileSync(file, 'utf8')).toBe(
      Array.from({ length: n }, (_, i) => line(i)).join(''),
    );
    fs.closeSync(fd);
  });

  it('a reader that does not keep up never blocks the event loop; the lines arrive whole and in order', async () => {
    const pipe = fifo();
    const stream = new LogStream(pipe.writer, { flushMs: 1 });
    // Far more than a pipe holds (64 KB).
    const lines = Array.from({ length: 2000 }, (_, i) => line(i, 300));
    for (const l of lines) stream.write(l);
    stream.flush();
    // The event loop still turns while the pipe is full.
    await new Promise((resolve) => setImmediate(resolve));
    expect(stream.busy).toBe(true);
    let read = '';
    while (stream.busy || read.length < lines.join('').length) {
      read = pipe.read();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(read).toBe(lines.join(''));
    pipe.close();
  });

  it('beyond maxPendingBytes lines are dropped and counted in a line of their own', async () => {
    const pipe = fifo();
    const stream = new LogStream(pipe.writer, { flushMs: 1, maxPendingBytes: 100 * 1024 });
    let accepted = 0;
    for (let i = 0; i < 2000; i++) if (stream.write(line(i, 300))) accepted++;
    expect(accepted).toBeLessThan(2000);
    let read = '';
    while (stream.busy || !read.includes('log lines dropped')) {
      read = pipe.read();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const notice = read
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { dropped?: number; msg?: string })
      .find((l) => l.msg?.startsWith('log lines dropped'));
    expect(notice?.dropped).toBeGreaterThan(0);
    pipe.close();
  });

  it('a reader that is gone (EPIPE) ends logging, not the process', async () => {
    const pipe = fifo();
    const stream = new LogStream(pipe.writer, { flushMs: 1 });
    pipe.closeReader();
    stream.write(line(1));
    await new Promise((resolve) => stream.once('broken', resolve));
    expect(stream.broken).toBe('EPIPE');
    expect(stream.write(line(2))).toBe(false);
    await expect(stream.drained(1000)).resolves.toBeUndefined();
    fs.closeSync(pipe.writer);
  });

  it('drained gives up on a reader that does not read, after its time-out', async () => {
    const pipe = fifo();
    const stream = new LogStream(pipe.writer, { flushMs: 1 });
    for (let i = 0; i < 1000; i++) stream.write(line(i, 300));
    const started = Date.now();
    await stream.drained(200);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(stream.busy).toBe(true);
    // Given up on: the flush on exit does not wait for it either.
    const flushStarted = Date.now();
    stream.flushSync();
    expect(Date.now() - flushStarted).toBeLessThan(100);
    pipe.close();
  });
});

/** The built module is not needed: the child runs LogStream transpiled from its source. */
function childScript(body: string): string {
  const dir = tmp();
  const source = fs.readFileSync(path.join(__dirname, '..', 'src', 'log-stream.ts'), 'utf8');
  const js = ts.transpileModule(source, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
  }).outputText;
  fs.writeFileSync(path.join(dir, 'log-stream.js'), js);
  fs.writeFileSync(
    path.join(dir, 'child.js'),
    `const { LogStream } = require('./log-stream.js');\nconst stream = new LogStream(1);\n${body}\n`,
  );
  return path.join(dir, 'child.js');
}

/** Runs the child with its stdout piped to this process; resolves with its exit code and output. */
function run(script: string): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => (stdout += d));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout })));
}

describe('LogStream when the process ends', () => {
  const lines = `for (let i = 0; i < 500; i++) stream.write(JSON.stringify({ n: i }) + '\\n');`;
  const expected = Array.from({ length: 500 }, (_, i) => `{"n":${i}}\n`).join('');

  it('process.exit right after the last line: every line reaches the reader', async () => {
    await expect(run(childScript(`${lines}\nprocess.exit(0);`))).resolves.toEqual({
      code: 0,
      stdout: expected,
    });
  });

  it('a fatal error right after the last line: every line reaches the reader', async () => {
    await expect(run(childScript(`${lines}\nthrow new Error('fatal');`))).resolves.toEqual({
      code: 1,
      stdout: expected,
    });
  });

  it('the event loop ends with lines pending: they are written', async () => {
    await expect(run(childScript(lines))).resolves.toEqual({ code: 0, stdout: expected });
  });
});
