import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';

export interface LogStreamOptions {
  /**
   * Longest time a line waits before it is written. Default: adaptive. A line that comes after a
   * quiet spell goes out at the end of the event loop's turn (setImmediate), so that it is in the
   * file before the answer of its request reaches the client; while lines keep coming, writes are
   * at least `minIntervalMs` apart, so that a busy service makes one write per batch of requests.
   */
  flushMs?: number;
  /** With the adaptive `flushMs`: the shortest time between two writes (default 5 ms). */
  minIntervalMs?: number;
  /**
   * With the adaptive `flushMs`, under sustained load (`loadLinesPerSecond`): the shortest time
   * between two writes (default 50 ms). Each batch costs its writer far more than its lines do
   * (a timer, a `write(2)`, a wake-up of the reader): measured with an audit line per request at
   * about 1,300 lines/s, batches 5 ms apart cost about 15-20 µs of CPU per line, 50 ms apart next
   * to nothing (docs/benchmarks.md).
   */
  loadIntervalMs?: number;
  /**
   * The rate of lines, over the time since the write before, from which a service counts as
   * under load and its writes are `loadIntervalMs` apart (default 1000 lines/s). Below it, they
   * are `minIntervalMs` apart: a line of a service that is not busy is not held longer.
   */
  loadLinesPerSecond?: number;
  /**
   * Largest single write, in bytes, made of whole lines (default 4096: PIPE_BUF, so that the
   * workers of one service, which share the pipe, never interleave inside a line; a process
   * alone on its output may write more at once).
   */
  maxWriteBytes?: number;
  /** Lines kept while the reader does not keep up (default 32 MiB); beyond, lines are dropped and counted. */
  maxPendingBytes?: number;
}

/** Every stream with lines still to write, flushed when the process exits. */
const live = new Set<LogStream>();
let exitHook = false;

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * The destination of the service's log lines (pino writes one JSON line per `write`): lines are
 * batched and written from the main thread with one non-blocking `write(2)` per batch, whole lines
 * of at most `maxWriteBytes` each, at the end of the event loop's turn or a few milliseconds later
 * (`flushMs`, `minIntervalMs`), up to 50 ms later under sustained load (`loadIntervalMs`,
 * `loadLinesPerSecond`). A pipe whose reader
 * does not keep up costs memory (bounded by `maxPendingBytes`), never a blocked event loop; a
 * reader that is gone (EPIPE) ends logging, not the process. On exit (`process.exit`, the end of
 * the event loop, a fatal error) whatever is pending is written synchronously, within a second.
 *
 * Why not pino's own destination (sonic-boom, asynchronous): it writes each line as soon as the
 * previous write is done, a write and a wake-up of the reader per line on a busy service.
 * With the audit line's writer (logger.ts), a line per request costs about half the CPU of
 * `logger.info` on `pino.destination({ sync: false })`; docs/benchmarks.md has the measurement.
 */
export class LogStream extends EventEmitter {
  private pending: string[] = [];
  private pendingBytes = 0;
  /** The unwritten end of a write the reader took only partly. */
  private partial: Buffer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private waiting = false;
  private brokenBy: string | undefined;
  private abandoned = false;
  private dropped = 0;
  private readonly flushMs: number | undefined;
  private readonly minIntervalMs: number;
  private readonly loadIntervalMs: number;
  private readonly loadLinesPerMs: number;
  /** The shortest time until the next write: minIntervalMs, or loadIntervalMs under load. */
  private intervalMs: number;
  /** When the last write went out (performance.now()). */
  private lastFlushAt = -Infinity;
  private readonly maxWriteBytes: number;
  private readonly maxPendingBytes: number;
  /** Keeps a libuv handle on a pipe or socket fd: it put the fd in non-blocking mode. */
  private readonly handle: unknown;

  constructor(
    readonly fd: number,
    options: LogStreamOptions = {},
  ) {
    super();
    this.flushMs = options.flushMs;
    this.minIntervalMs = options.minIntervalMs ?? 5;
    this.loadIntervalMs = options.loadIntervalMs ?? 50;
    this.loadLinesPerMs = (options.loadLinesPerSecond ?? 1000) / 1000;
    this.intervalMs = this.minIntervalMs;
    this.maxWriteBytes = options.maxWriteBytes ?? 4096;
    this.maxPendingBytes = options.maxPendingBytes ?? 32 * 1024 * 1024;
    this.handle = nonBlocking(fd);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', () => {
        for (const stream of live) stream.flushSync();
      });
    }
  }

  /** Why logging ended (the reader is gone), or undefined while it works. */
  get broken(): string | undefined {
    return this.brokenBy;
  }

  /** Whether lines are still waiting to be written. */
  get busy(): boolean {
    return this.pendingBytes > 0 || this.partial !== undefined;
  }

  /** One log line (pino's DestinationStream). */
  write(line: string): boolean {
    if (this.brokenBy) return false;
    // Sizes in UTF-16 units (a byte each for the ASCII a JSON line mostly is): cheap, and close
    // enough for the bound and the batching; the writes themselves count bytes.
    if (this.pendingBytes + line.length > this.maxPendingBytes) {
      this.dropped++;
      return false;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (!this.timer && !this.immediate && !this.waiting) {
      live.add(this);
      if (this.flushMs === undefined) {
        const wait = this.lastFlushAt + this.intervalMs - performance.now();
        if (wait <= 0) {
          this.immediate = setImmediate(() => this.flush());
          this.immediate.unref();
        } else {
          // Whole milliseconds: Node keeps one timer list per distinct duration.
          this.timer = setTimeout(() => this.flush(), Math.ceil(wait));
          this.timer.unref();
        }
      } else {
        // A burst larger than one write goes out at once; a trickle waits for company.
        this.timer = setTimeout(
          () => this.flush(),
          this.pendingBytes >= this.maxWriteBytes ? 0 : this.flushMs,
        );
        this.timer.unref();
      }
    }
    return true;
  }

  /** Writes what is pending now, as far as the reader takes it; retries later for the rest. */
  flush(): void {
    this.cancelScheduled();
    this.waiting = false;
    const now = performance.now();
    // Under load when this batch's lines came at loadLinesPerSecond or more since the last write.
    this.intervalMs =
      this.pending.length >= (now - this.lastFlushAt) * this.loadLinesPerMs
        ? this.loadIntervalMs
        : this.minIntervalMs;
    this.lastFlushAt = now;
    const result = this.writeOut();
    if (result === 'again') {
      // The reader is slow: try again in a while (no busy loop, the event loop keeps serving).
      this.waiting = true;
      this.timer = setTimeout(() => this.flush(), Math.max(this.flushMs ?? 0, 10));
      this.timer.unref();
    } else if (result === 'done') {
      this.emit('drain');
    }
  }

  /**
   * Writes everything pending before returning, waiting for a slow reader at most `timeoutMs`
   * (default 1000); used on exit. A reader gone or given up on is not waited for.
   */
  flushSync(timeoutMs = 1000): void {
    this.cancelScheduled();
    const until = Date.now() + timeoutMs;
    while (!this.brokenBy && !this.abandoned && this.busy) {
      if (this.writeOut() !== 'again') break;
      if (Date.now() >= until) break;
      sleep(5);
    }
  }

  /**
   * Resolves once every line written so far is out (or logging broke); after `timeoutMs` it gives
   * up on a reader that does not read, so that a stopping service still exits.
   */
  drained(timeoutMs: number): Promise<void> {
    if (!this.busy || this.brokenBy) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.off('drain', done);
        this.off('broken', done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.abandoned = true;
        done();
      }, timeoutMs);
      timer.unref();
      this.once('drain', done);
      this.once('broken', done);
      this.flush();
    });
  }

  private cancelScheduled(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = undefined;
  }

  /** 'done', 'again' (the reader is full), or 'broken'. */
  private writeOut(): 'done' | 'again' | 'broken' {
    try {
      if (this.dropped > 0 && !this.brokenBy) this.noteDropped();
      for (;;) {
        // The bytes in hand stay in `partial` until written: a write the reader refuses
        // (EAGAIN) or takes only partly loses nothing.
        if (!this.partial) {
          if (!this.pending.length) break;
          this.partial = Buffer.from(this.takeChunk());
        }
        const n = fs.writeSync(this.fd, this.partial);
        if (n < this.partial.length) {
          this.partial = this.partial.subarray(n);
          return 'again';
        }
        this.partial = undefined;
      }
      live.delete(this);
      return 'done';
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') return 'again';
      // EPIPE (the reader is gone), EBADF, ...: logging ends here, the service goes on.
      this.brokenBy = code ?? String(err);
      this.pending = [];
      this.pendingBytes = 0;
      this.partial = undefined;
      live.delete(this);
      this.emit('broken', this.brokenBy);
      return 'broken';
    }
  }

  /** Whole lines from the front of `pending`, about `maxWriteBytes` at most (one line at least). */
  private takeChunk(): string {
    let size = 0;
    let count = 0;
    for (const line of this.pending) {
      if (count > 0 && size + line.length > this.maxWriteBytes) break;
      size += line.length;
      count++;
    }
    const lines = this.pending.splice(0, count);
    this.pendingBytes = Math.max(0, this.pendingBytes - size);
    return lines.length === 1 ? lines[0] : lines.join('');
  }

  /** One line saying how many lines were dropped while the reader did not keep up. */
  private noteDropped(): void {
    const line = `${JSON.stringify({
      level: 40,
      time: new Date().toISOString(),
      dropped: this.dropped,
      msg: 'log lines dropped: the reader of the log did not keep up',
    })}\n`;
    this.dropped = 0;
    this.pending.unshift(line);
    this.pendingBytes += line.length;
  }
}

/**
 * A pipe or socket fd in non-blocking mode, so that a full pipe answers EAGAIN instead of
 * stopping the event loop: libuv puts the fd in that mode when it opens a handle on it (Node does
 * so for process.stdout and process.stderr). Files and terminals are left as they are.
 */
function nonBlocking(fd: number): unknown {
  if (fd === 1) return process.stdout;
  if (fd === 2) return process.stderr;
  let stat: fs.Stats;
  try {
    stat = fs.fstatSync(fd);
  } catch {
    return undefined;
  }
  if (!stat.isFIFO() && !stat.isSocket()) return undefined;
  const socket = new net.Socket({ fd, readable: false, writable: true });
  socket.unref();
  return socket;
}
