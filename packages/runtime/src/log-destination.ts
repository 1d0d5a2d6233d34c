import fs from 'node:fs';
import net from 'node:net';
import pino from 'pino';

type LogDestination = ReturnType<typeof pino.destination>;

/** Linux's PIPE_BUF: a write of at most this many bytes to a pipe is never split by another's. */
const PIPE_BUF = 4096;
const FLUSH_MS = 50;
const MAX_BUFFERED = 32 * 1024 * 1024;
const EXIT_FLUSH_MS = 2000;

interface Output {
  ended?: string;
  refused: boolean;
  lastWrite: number;
  lastWriteAt: number;
  /** The next line checks for a quiet spell (once per write, not per line). */
  armed: boolean;
  dropped: number;
  /** Keeps the handle that put a pipe or socket fd in non-blocking mode. */
  handle: unknown;
}

const outputs = new Map<LogDestination, Output>();

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** README "Logs". Not `sync: false` nor `flushSync`: see there. */
export function openLogDestination(
  fd: number,
  options: { shared: boolean; onDropped: (count: number) => void },
): { destination: LogDestination; streamWrite: (line: string) => string } {
  const output: Output = {
    refused: false,
    lastWrite: 0,
    lastWriteAt: -Infinity,
    armed: true,
    dropped: 0,
    handle: nonBlocking(fd),
  };
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
      output.refused = true;
      threshold.minLength = MAX_BUFFERED;
      return;
    }
    // EPIPE, EBADF ...: logging ends here, the service goes on (as pino does on EPIPE).
    output.ended = err.code ?? String(err);
    const nothing = () => true;
    destination.write = nothing;
    destination.flush = nothing;
    destination.flushSync = nothing;
  });
  destination.on('drop', () => output.dropped++);
  destination.on('write', (bytes: number) => {
    output.lastWrite = bytes;
    if (bytes === 0) return;
    threshold.minLength = minLength;
    output.lastWriteAt = performance.now();
    output.armed = true;
    if (output.dropped > 0) {
      process.nextTick(options.onDropped, output.dropped);
      output.dropped = 0;
    }
  });
  const flushNow = () => destination.flush();
  if (outputs.size === 0) {
    process.on('exit', () => {
      const until = Date.now() + EXIT_FLUSH_MS;
      for (const pending of outputs.keys()) flushLogDestination(pending, until - Date.now());
    });
  }
  outputs.set(destination, output);
  const streamWrite = (line: string) => {
    if (output.armed) {
      output.armed = false;
      if (performance.now() - output.lastWriteAt >= FLUSH_MS) setImmediate(flushNow).unref();
    }
    return line;
  };
  return { destination, streamWrite };
}

export function flushLogDestination(destination: unknown, timeoutMs: number): void {
  const output = outputs.get(destination as LogDestination);
  if (!output) return;
  const until = Date.now() + timeoutMs;
  while (!output.ended) {
    output.refused = false;
    output.lastWrite = -1;
    (destination as LogDestination).flush();
    if (output.refused) {
      if (Date.now() >= until) return;
      sleep(5);
    } else if (output.lastWrite <= 0) {
      return;
    }
  }
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
  const socket = new net.Socket({ fd, readable: false, writable: true });
  socket.unref();
  return socket;
}
