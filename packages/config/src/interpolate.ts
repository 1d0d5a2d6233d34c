import { parse } from 'yaml';
import { ConfigError } from './config-error';

const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}$/;
const PART = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g;

/**
 * light-4j style `${NAME}` / `${NAME:default}` substitution from the environment, applied to every
 * string value of a parsed file. A value that is nothing but one expression takes the type of
 * what it expands to (`${PORT:7441}` is the number 7441); inside a longer string it is text.
 */
export function interpolate(
  value: unknown,
  env: NodeJS.ProcessEnv,
  file: string,
  key: string[] = [],
): unknown {
  if (typeof value === 'string') {
    const lookup = (name: string, fallback: string | undefined): string => {
      const found = env[name];
      if (found !== undefined) return found;
      if (fallback !== undefined) return fallback;
      throw new ConfigError(file, key.join('.'), `environment variable ${name} is not set`);
    };
    const whole = WHOLE.exec(value);
    if (whole) {
      const text = lookup(whole[1], whole[2]);
      try {
        return text === '' ? '' : parse(text);
      } catch {
        return text;
      }
    }
    return value.replace(PART, (_m, name: string, fallback?: string) => lookup(name, fallback));
  }
  if (Array.isArray(value))
    return value.map((v, i) => interpolate(v, env, file, [...key, String(i)]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, env, file, [...key, k]);
    return out;
  }
  return value;
}
