import pino, { type DestinationStream, type Logger } from 'pino';
import { isoTimeClock } from './iso-time';
import { LogStream } from './log-stream';
import { workerNumber } from './workers';

/** The log stream and the service of each logger made here on a file descriptor. */
const outputs = new WeakMap<Logger, { stream: LogStream; service: string }>();

/**
 * One JSON line per event on stdout, written in batches by a LogStream (never blocking the event
 * loop, flushed on exit). Headers that carry credentials are redacted wherever a log call passes
 * them, so a token or a secret cannot reach a log line by accident. `destination` replaces
 * stdout: another file descriptor, or a stream (tests).
 */
export function createLogger(
  serviceId: string,
  level = process.env.LOG_LEVEL ?? 'info',
  destination: DestinationStream | number = 1,
): Logger {
  // In a service with several worker processes (server.yml `workers`), each line names its worker,
  // and the workers share one pipe: writes of at most PIPE_BUF keep their lines whole. A process
  // alone on its output writes larger batches (fewer writes, fewer wake-ups of the reader).
  const worker = workerNumber();
  const stream =
    typeof destination === 'number'
      ? new LogStream(destination, { maxWriteBytes: worker === undefined ? 65536 : 4096 })
      : undefined;
  const logger = pino(
    {
      level,
      base: worker === undefined ? { service: serviceId } : { service: serviceId, worker },
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
    stream ?? (destination as DestinationStream),
  );
  if (stream) outputs.set(logger, { stream, service: serviceId });
  return logger;
}

/**
 * Logs a last line and waits until every line logged so far has been written, or could not be:
 * a reader that went away (EPIPE) ends logging, not the process, and a reader that does not read
 * is given up on after `timeoutMs`. Call it before `process.exit`.
 */
export async function logLastLine(
  logger: Logger,
  message: string,
  timeoutMs = 2000,
): Promise<void> {
  logger.info(message);
  await outputs.get(logger)?.stream.drained(timeoutMs);
}

/** Writes every pending line of the logger now (a fatal error, before the process ends). */
export function flushLogger(logger: Logger): void {
  outputs.get(logger)?.stream.flushSync();
}

const INFO = 30;

/**
 * A writer of one info line with a fixed message, the same JSON line pino writes for
 * `logger.info(fields, message)` (level, time, service, the fields in their order without the
 * undefined ones, msg), for the line logged on every request: the audit line of a verified
 * request. pino's general path (serializers, redaction, hooks) costs more per line (with
 * LogStream, about twice in all: docs/benchmarks.md); the audit fields are plain values that no redaction
 * path names. On a logger without a file descriptor (tests), it is `logger.info`.
 */
export function infoLineWriter(
  logger: Logger,
  message: string,
): (fields: Record<string, unknown>) => void {
  const output = outputs.get(logger);
  if (!output) return (fields) => logger.info(fields, message);
  const { stream } = output;
  const worker = workerNumber();
  const service = `","service":${JSON.stringify(output.service)}${worker === undefined ? '' : `,"worker":${worker}`}`;
  const end = `,"msg":${JSON.stringify(message)}}\n`;
  const time = isoTimeClock();
  // `,"key":` per field name: the audit line has the same few names on every request.
  const keys = new Map<string, string>();
  return (fields) => {
    if (logger.levelVal > INFO) return;
    let line = `{"level":${INFO},"time":"${time()}${service}`;
    for (const key in fields) {
      const value = fields[key];
      if (value === undefined) continue;
      let name = keys.get(key);
      if (name === undefined) {
        name = `,${JSON.stringify(key)}:`;
        if (keys.size < 64) keys.set(key, name);
      }
      line += name + JSON.stringify(value);
    }
    stream.write(line + end);
  };
}

export type { Logger };
