import pino, { type Logger } from 'pino';

/**
 * One JSON line per event on stdout. Headers that carry credentials are redacted wherever a
 * log call passes them, so a token or a secret cannot reach a log line by accident.
 */
export function createLogger(serviceId: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
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
  });
}

export type { Logger };
