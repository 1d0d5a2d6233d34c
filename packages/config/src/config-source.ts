import path from 'node:path';
import { ConfigLoader, type SchemaFactory } from './config-loader.js';
import type { ConfigWarning } from './file-keys.js';

/** Where a library's config warnings go (pino's `warn` fits). */
export interface WarningLogger {
  warn(fields: object, message: string): void;
}

/**
 * A library's config file outside a service: its path (required), or its keys as YAML parses
 * them (paths resolve against the working folder). Checked by `schema` as the services' loader
 * checks a file; warnings go to `logger`. `file`: its path, or `<name>.yml` (for messages).
 */
export function loadConfigSource<T>(
  source: string | Record<string, unknown>,
  name: string,
  schema: SchemaFactory<T>,
  logger?: WarningLogger,
): { value: T; file: string } {
  const file = typeof source === 'string' ? path.resolve(source) : undefined;
  const dir = file ? path.dirname(file) : process.cwd();
  const loader = new ConfigLoader({ bundledDir: dir, overrideDir: dir });
  const value = file
    ? loader.load(path.basename(file, path.extname(file)), schema, { required: true })
    : loader.check(`${name}.yml`, dir, source as Record<string, unknown>, schema);
  if (logger) logConfigWarnings(logger, loader.warnings);
  return { value, file: file ?? `${name}.yml` };
}

/** One line per config warning, naming the file and the key. */
export function logConfigWarnings(logger: WarningLogger, warnings: readonly ConfigWarning[]): void {
  for (const { file, key, message } of warnings) {
    logger.warn({ file, key }, `${file}${key ? ` key "${key}"` : ''}: ${message}`);
  }
}
