import { ConfigError } from '@chain/errors';
import { parseYamlValue } from './yaml-text.js';

interface ValueSources {
  env: NodeJS.ProcessEnv;
  values: Readonly<Record<string, unknown>>;
}

const EXPRESSION = /\$\{([^}]*)\}/g;
const WHOLE = /^\$\{([^}]*)\}$/;

/** The key is left out, so its default applies. */
const ABSENT = Symbol('absent');

/** light-4j's name of the environment variable of `${security.enableVerifyJwt}`: SECURITY_ENABLEVERIFYJWT. */
export function environmentName(name: string): string {
  return name.replace(/[^A-Za-z0-9]/g, '_').toUpperCase();
}

/**
 * light-4j's `${name}` / `${name:default}` / `${name:?error}` injection (README). A value that is
 * one expression takes the type of what it expands to; inside a longer string it is text.
 */
export function interpolate(value: unknown, sources: ValueSources, file: string): unknown {
  const result = expand(value, sources, file, []);
  return result === ABSENT ? undefined : result;
}

function expand(value: unknown, sources: ValueSources, file: string, key: string[]): unknown {
  if (typeof value === 'string') return expandString(value, sources, file, key);
  if (Array.isArray(value)) {
    return value
      .map((v, i) => expand(v, sources, file, [...key, String(i)]))
      .filter((v) => v !== ABSENT);
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const expanded = expand(v, sources, file, [...key, k]);
      if (expanded !== ABSENT) out[k] = expanded;
    }
    return out;
  }
  return value;
}

function expandString(text: string, sources: ValueSources, file: string, key: string[]): unknown {
  const whole = WHOLE.exec(text);
  if (whole) return resolve(whole[1], sources, file, key);
  if (!text.includes('${')) return text;
  return text.replace(EXPRESSION, (_match, content: string) => {
    const found = resolve(content, sources, file, key);
    if (found === ABSENT) return '';
    return typeof found === 'string' ? found : JSON.stringify(found);
  });
}

function resolve(content: string, sources: ValueSources, file: string, key: string[]): unknown {
  const colon = content.indexOf(':');
  const name = (colon < 0 ? content : content.slice(0, colon)).trim();
  const fallback = colon < 0 ? undefined : content.slice(colon + 1).trim();
  const where = key.join('.') || undefined;
  if (name === '') throw new ConfigError(file, where, 'an empty ${} expression');

  const { env, values } = sources;
  const fromEnv = env[name] ?? env[environmentName(name)];
  if (fromEnv !== undefined) return fromEnv === '' ? '' : parseYamlValue(fromEnv);
  if (Object.hasOwn(values, name)) return values[name] ?? ABSENT;
  if (fallback === undefined) {
    const reason = `${name} is set neither in the environment nor in values.yml`;
    throw new ConfigError(file, where, reason);
  }
  if (fallback.startsWith('?')) {
    throw new ConfigError(file, where, fallback.slice(1).trim() || `${name} is required`);
  }
  return fallback === '' ? ABSENT : parseYamlValue(fallback);
}
