/** Names the file and the key, never the value (a value may be a secret). */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(
    readonly file: string,
    readonly key: string | undefined,
    readonly reason: string,
  ) {
    super(`Config error in ${file}${key ? ` at key "${key}"` : ''}: ${reason}`);
  }
}
