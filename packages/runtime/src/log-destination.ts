import fs from 'node:fs';
import net from 'node:net';
import pino from 'pino';

/** pino's destination (sonic-boom). */
type LogDestination = ReturnType<typeof pino.destination>;

/** Linux's PIPE_BUF: a write of at most this many bytes to a pipe is never split by another's. */
const PIPE_BUF = 4096;
/** The longest a line waits in the buffer; a line this long after the last write goes at once. */
const FLUSH_MS = 50;
/** Bytes kept while the reader does not keep up; beyond, lines are dropped and counted. */
const MAX_BUFFERED = 32 * 1024 * 1024;
/** How long the flush on exit waits for a reader that does not read. */
const EXIT_FLUSH_MS = 2000;

interface Output {
  /** Why logging ended (EPIPE: the reader is gone). */
  ended?: string;
  /** The last write was refused (EAGAIN). */
  refused: boolean;
  /** Bytes of the last write (0: nothing to write). */
  lastWrite: number;
  lastWriteAt: number;
  /** The next line looks whether it comes after a quiet spell (once per write, not per line). */
  armed: boolean;
  dropped: number;
  /** Keeps the handle that put a pipe or socket fd in non-blocking mode. */
  handle: unknown;
}

const outputs = new Map<LogDestination, Output>();

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * pino's destination on a file descriptor, configured for a service (README "Logs"): buffered
 * (`minLength`, `periodicFlush`), whole lines of at most PIPE_BUF per write in a worker
 * (`maxWrite`), synchronous writes on a non-blocking fd (a full pipe is not waited for, a gone
 * reader ends logging), everything written on exit. `streamWrite` is pino's hook that writes a
 * line after a quiet spell at the end of its event-loop turn. Not `sync: false`: a write in
 * flight at exit is left out of pino's flush; not `flushSync`: it retries an EPIPE forever.
 */
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
  const destination = pino.destination({
    fd,
    sync: true,
    minLength: options.shared ? 3072 : 32768,
    maxWrite: options.shared ? PIPE_BUF : 65536,
    maxLength: MAX_BUFFERED,
    periodicFlush: FLUSH_MS,
    // A full pipe is never waited for while the service runs (flushLogDestination waits).
    retryEAGAIN: () => false,
  });
  destination.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EAGAIN' || err.code === 'EBUSY') {
      output.refused = true;
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

/**
 * Writes every line still buffered, waiting at most `timeoutMs` for a reader that does not keep
 * up; at once when logging has ended. Another stream than openLogDestination's: nothing.
 */
export function flushLogDestination(destination: unknown, timeoutMs: number): void {
  const output = outputs.get(destination as LogDestination);
  if (!output) return;
  const until = Date.now() + timeoutMs;
  while (!output.ended) {
    output.refused = false;
    output.lastWrite = -1;
    // Writes what is buffered; with nothing left, an empty write.
    (destination as LogDestination).flush();
    if (output.refused) {
      if (Date.now() >= until) return;
      sleep(5);
    } else if (output.lastWrite <= 0) {
      return;
    }
  }
}

/**
 * A pipe or socket fd in non-blocking mode (a full pipe answers EAGAIN instead of stopping the
 * event loop), as libuv sets it when it opens a handle on it (Node does for stdout and stderr).
 * Files and terminals are left as they are.
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
