import fs from 'node:fs';
import net from 'node:net';
import pino from 'pino';

/** pino's destination (sonic-boom). */
export type LogDestination = ReturnType<typeof pino.destination>;

/** Linux's PIPE_BUF: a write of at most this many bytes to a pipe is never split by another's. */
const PIPE_BUF = 4096;
/**
 * The longest a line waits in the buffer while the service runs; a line logged this long after
 * the last write (a quiet spell) is written at the end of its event-loop turn.
 */
const FLUSH_MS = 50;
/** Bytes kept while the reader does not keep up; beyond, lines are dropped and counted. */
const MAX_BUFFERED = 32 * 1024 * 1024;
/** How long the flush on exit waits for a reader that does not read. */
const EXIT_FLUSH_MS = 2000;

interface Output {
  /** Why logging ended (EPIPE: the reader is gone), or undefined while it works. */
  ended?: string;
  /** The last write was refused (EAGAIN): the reader's pipe is full. */
  refused: boolean;
  /** Bytes of the last write (0: there was nothing to write). */
  lastWrite: number;
  /** When lines were last written (performance.now()). */
  lastWriteAt: number;
  /** The next line looks whether it comes after a quiet spell (once per write, not per line). */
  armed: boolean;
  dropped: number;
  /** Keeps the handle that put a pipe or socket fd in non-blocking mode. */
  handle: unknown;
}

const outputs = new Map<LogDestination, Output>();

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

export interface OpenedLogDestination {
  destination: LogDestination;
  /**
   * pino's `hooks.streamWrite`: a line that comes after a quiet spell is written at the end of
   * its event-loop turn, so that the line of a lone request is in the log before its answer
   * reaches the client; lines that follow a write closely wait for the next one.
   */
  streamWrite: (line: string) => string;
}

export interface LogDestinationOptions {
  /** The fd is a pipe other processes write to (the workers of a service): writes of PIPE_BUF. */
  shared: boolean;
  /** Told how many lines were dropped, once the reader takes lines again. */
  onDropped: (count: number) => void;
}

/**
 * pino's destination on a file descriptor, configured for a service: lines are buffered and
 * written together (`minLength`), at most `FLUSH_MS` after they were logged (`periodicFlush`) or
 * at the end of their event-loop turn after a quiet spell (`streamWrite`), in
 * writes of whole lines of at most PIPE_BUF in a worker (`maxWrite`), so that the workers sharing
 * one pipe never interleave inside a line. Writes are synchronous `write(2)`s on a non-blocking
 * fd: a reader that does not keep up (EAGAIN) is not waited for, the lines stay buffered (at most
 * `MAX_BUFFERED` bytes, `maxLength`; beyond, they are dropped and counted) and go with the next
 * write; a reader that is gone (EPIPE) ends logging, not the process. Every pending line is
 * written when the process exits (`process.exit`, a fatal error, the end of the event loop),
 * waiting `EXIT_FLUSH_MS` at most for a slow reader.
 *
 * Not `sync: false`: there the writes run on libuv's thread pool, and a write in flight or waiting
 * to be retried when the process exits is not in pino's flush on exit (`flushSync` skips it), so
 * its lines are lost; not `flushSync` either: it retries an EPIPE forever.
 */
export function openLogDestination(
  fd: number,
  options: LogDestinationOptions,
): OpenedLogDestination {
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
 * up; returns at once when logging has ended. Another stream than openLogDestination's: nothing.
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
