import fs from 'node:fs';
import type { z } from 'zod';

/**
 * The one reader of a key, certificate or trust store file a config key names: read once, when
 * the config loads, and made by `check` into what start-up uses; `check` throws an Error saying
 * what the file holds instead (never its content). A failure is an issue at `key`, so the
 * ConfigError names the config file and the key.
 */
export function readConfigFile<T>(
  ctx: z.RefinementCtx,
  key: (string | number)[],
  file: string,
  check: (bytes: Buffer) => T,
): T | undefined {
  const refuse = (message: string): undefined => {
    ctx.addIssue({ code: 'custom', path: key, message });
    return undefined;
  };
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    return refuse(missing ? `file not found: ${file}` : `cannot be read: ${file}`);
  }
  try {
    return check(bytes);
  } catch (err) {
    return refuse((err as Error).message);
  }
}

/** `test` must not throw: `message` otherwise (OpenSSL's words are not the operator's). */
export function mustPass(message: string, test: () => unknown): void {
  try {
    test();
  } catch {
    throw new Error(message);
  }
}
