import pino, { type DestinationStream, type Logger } from 'pino';

type Stdout = ReturnType<typeof pino.destination>;

/** The file descriptor destination of each logger made here, and whether its reader went away. */
const outputs = new WeakMap<Logger, { stream: Stdout; broken: boolean }>();

/**
 * One JSON line per event on stdout. Headers that carry credentials are redacted wherever a
 * log call passes them, so a token or a secret cannot reach a log line by accident.
 * `destination` replaces stdout: another file descriptor, or a stream (tests).
 */
export function createLogger(
  serviceId: string,
  level = process.env.LOG_LEVEL ?? 'info',
  destination: DestinationStream | number = 1,
): Logger {
  const stdout =
    typeof destination === 'number'
      ? pino.destination({ dest: destination, sync: false })
      : undefined;
  const logger = pino(
    {
      level,
      base: { service: serviceId },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'headers.authorization',
          'headers["x-scope-token"]',
          'req.headers.authorization',
          'req.headers["x-scope-token"]',
          '*.client_secret',
          '*.password',
          '*.influxdbPass',
        ],
        censor: '[redacted]',
      },
    },
    stdout ?? (destination as DestinationStream),
  );
  if (stdout) {
    const output = { stream: stdout, broken: false };
    // pino already stops writing after EPIPE (the reader went away); any other write error
    // ends logging too, instead of the process.
    stdout.on('error', () => (output.broken = true));
    outputs.set(logger, output);
  }
  return logger;
}

/**
 * Logs a last line and waits until it has been written to stdout, or could not be: a reader
 * that went away (EPIPE) ends logging, not the process. Call it before `process.exit`: pino
 * flushes its buffer on exit synchronously, and that flush retries a broken pipe forever.
 */
export function logLastLine(logger: Logger, message: string, timeoutMs = 2000): Promise<void> {
  const output = outputs.get(logger);
  if (!output || output.broken) {
    logger.info(message);
    return Promise.resolve();
  }
  const { stream } = output;
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stream.off('drain', done);
      stream.off('error', done);
      resolve();
    };
    const timer = setTimeout(() => {
      // A reader that does not read: leave the lines still buffered rather than hang on exit.
      stream.flushSync = () => undefined;
      done();
    }, timeoutMs);
    timer.unref();
    // The line just logged is written asynchronously: 'drain' once everything buffered is
    // written, 'error' if it cannot be.
    stream.once('drain', done);
    stream.once('error', done);
    logger.info(message);
  });
}

export type { Logger };
