import pino, { type Logger } from 'pino';

/** A real pino logger whose lines the test can read. */
export function captureLogger(): {
  logger: Logger;
  lines: () => Record<string, unknown>[];
  text: () => string;
} {
  const raw: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => raw.push(line) });
  return {
    logger,
    lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>),
    text: () => raw.join(''),
  };
}
