import pino, { type DestinationStream, type Logger } from 'pino';
import { flushLogDestination, openLogDestination } from './log-destination';
import { workerNumber } from './workers';

/** The request headers that carry a token. */
const TOKEN_HEADERS = ['authorization', 'Authorization', 'x-scope-token', 'X-Scope-Token'];
/** The OAuth 2.0 form field and the config keys that hold a secret. */
const SECRETS = ['client_secret', 'password', 'influxdbPass'];

/**
 * Where a log call can hold a credential: a secret at the top of the line, headers (`headers`,
 * `req.headers`), an error (pino's `err` serializer keeps an error's own properties). Named
 * paths, not wildcards (`*.password`): pino's redaction walks every wildcard path for every field
 * of every line, the audit line of each request included, while a named path costs nothing to a
 * line without its first key (README "Logs"). A header's name at the top of a line is not one of
 * them: the chain's trace line puts a token's summary there (fingerprint and client id).
 */
const REDACT_PATHS = [
  ...SECRETS.map((name) => path('', name)),
  ...TOKEN_HEADERS.flatMap((name) => [path('headers', name), path('req.headers', name)]),
  ...[...TOKEN_HEADERS, ...SECRETS].map((name) => path('err', name)),
];

function path(container: string, name: string): string {
  return `${container}[${JSON.stringify(name)}]`;
}

/**
 * One JSON line per event on stdout: pino, its ISO time, `service` (and `worker` in a worker
 * process) in every line, credentials redacted in every line (the audit line's `jwt`, which
 * security.yml `logJwtToken` asks for, is not a redacted name). On a file descriptor, lines go
 * through pino's destination (./log-destination: buffered, never blocking, flushed on exit);
 * `destination` replaces stdout: another file descriptor, or a stream (tests).
 */
export function createLogger(
  serviceId: string,
  level = process.env.LOG_LEVEL ?? 'info',
  destination: DestinationStream | number = 1,
): Logger {
  const worker = workerNumber();
  const opened =
    typeof destination === 'number'
      ? openLogDestination(destination, {
          shared: worker !== undefined,
          onDropped: (dropped) =>
            logger.warn({ dropped }, 'log lines dropped: the reader of the log did not keep up'),
        })
      : undefined;
  const logger: Logger = pino(
    {
      level,
      base: worker === undefined ? { service: serviceId } : { service: serviceId, worker },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      ...(opened && { hooks: { streamWrite: opened.streamWrite } }),
    },
    opened?.destination ?? (destination as DestinationStream),
  );
  return logger;
}

/**
 * Writes every line the logger holds now, waiting at most `timeoutMs` for a reader that does not
 * keep up; at once when the reader is gone. (On exit this happens by itself.)
 */
export function flushLogger(logger: Logger, timeoutMs = 1000): void {
  flushLogDestination(
    (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym],
    timeoutMs,
  );
}

let fatalErrorsHandled = false;

/**
 * An uncaught exception or unhandled rejection ends the process as Node would (exit code 1), after
 * a fatal line with the error: with the lines logged before it, it is written before the exit.
 * Once per process.
 */
export function exitOnFatalError(logger: Logger): void {
  if (fatalErrorsHandled) return;
  fatalErrorsHandled = true;
  process.on('uncaughtException', (err, origin) => {
    try {
      logger.fatal(
        { err },
        origin === 'unhandledRejection' ? 'unhandled promise rejection' : 'uncaught exception',
      );
    } finally {
      process.exit(1);
    }
  });
}

export type { Logger };
