import fs from 'node:fs';
import net from 'node:net';
import pino, { type Logger } from 'pino';

type LogDestination = ReturnType<typeof pino.destination>;

/** Linux's PIPE_BUF: a write of at most this many bytes to a pipe is never split by another's. */
const PIPE_BUF = 4096;
const FLUSH_MS = 50;
const MAX_BUFFERED = 32 * 1024 * 1024;
const EXIT_FLUSH_MS = 2000;

/** Each destination opened here: its flush, and the handle that keeps its fd non-blocking. */
const opened = new Map<unknown, { flush: (timeoutMs: number) => void; handle: unknown }>();

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** README "Logs". Not `sync: false` nor `flushSync`: see there. */
export function openLogDestination(
  fd: number,
  options: { shared: boolean; onDropped: (count: number) => void },
): { destination: LogDestination; streamWrite: (line: string) => string } {
  const handle = nonBlocking(fd);
  let ended: string | undefined;
  let refused = false;
  let lastWrite = 0;
  let lastWriteAt = -Infinity;
  /** The next line checks for a quiet spell (once per write, not per line). */
  let armed = true;
  let dropped = 0;
  const minLength = options.shared ? 3072 : 16384;
  const destination = pino.destination({
    fd,
    sync: true,
    minLength,
    maxWrite: options.shared ? PIPE_BUF : 32768,
    maxLength: MAX_BUFFERED,
    periodicFlush: FLUSH_MS,
    retryEAGAIN: () => false,
  });
  // sonic-boom's `minLength` (not in its types): raised while the reader's pipe is full.
  const threshold = destination as unknown as { minLength: number };
  destination.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EAGAIN' || err.code === 'EBUSY') {
      // A full pipe: sonic-boom would try (and fail) a write at every next line; the lines are
      // held until the periodic flush instead (flush ignores minLength), up to maxLength.
      refused = true;
      threshold.minLength = MAX_BUFFERED;
      return;
    }
    // EPIPE, EBADF ...: logging ends here, the service goes on (as pino does on EPIPE).
    ended = err.code ?? String(err);
    const nothing = () => true;
    destination.write = nothing;
    destination.flush = nothing;
    destination.flushSync = nothing;
  });
  destination.on('drop', () => dropped++);
  destination.on('write', (bytes: number) => {
    lastWrite = bytes;
    if (bytes === 0) return;
    threshold.minLength = minLength;
    lastWriteAt = performance.now();
    armed = true;
    if (dropped > 0) {
      process.nextTick(options.onDropped, dropped);
      dropped = 0;
    }
  });
  const flush = (timeoutMs: number) => {
    const until = Date.now() + timeoutMs;
    while (!ended) {
      refused = false;
      lastWrite = -1;
      destination.flush();
      if (refused) {
        if (Date.now() >= until) return;
        sleep(5);
      } else if (lastWrite <= 0) {
        return;
      }
    }
  };
  if (opened.size === 0) {
    process.on('exit', () => {
      const until = Date.now() + EXIT_FLUSH_MS;
      for (const pending of opened.values()) pending.flush(until - Date.now());
    });
  }
  opened.set(destination, { flush, handle });
  const flushNow = () => destination.flush();
  const streamWrite = (line: string) => {
    if (armed) {
      armed = false;
      if (performance.now() - lastWriteAt >= FLUSH_MS) setImmediate(flushNow).unref();
    }
    return line;
  };
  return { destination, streamWrite };
}

export function flushLogger(logger: Logger, timeoutMs = 1000): void {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  opened.get(stream)?.flush(timeoutMs);
}

/** A pipe or socket fd made non-blocking by a libuv handle (a full pipe answers EAGAIN). */
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
  return new net.Socket({ fd, readable: false, writable: true }).unref();
}
