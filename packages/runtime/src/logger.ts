import pino, { type DestinationStream, type Logger } from 'pino';
import { openLogDestination } from './log-destination.js';
import { workerNumber } from './workers.js';

const TOKEN_HEADERS = ['authorization', 'Authorization', 'x-scope-token', 'X-Scope-Token'];
const SECRETS = ['client_secret', 'password', 'influxdbPass'];

const path = (container: string, name: string) => `${container}[${JSON.stringify(name)}]`;

/** Named paths, not wildcards (README "Logs"); not a header's name at the top of a line. */
const REDACT_PATHS = [
  ...SECRETS.map((name) => path('', name)),
  ...TOKEN_HEADERS.flatMap((name) => [path('headers', name), path('req.headers', name)]),
  ...[...TOKEN_HEADERS, ...SECRETS].map((name) => path('err', name)),
];

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

let fatalErrorsHandled = false;

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

export { flushLogger } from './log-destination.js';
export type { Logger };
