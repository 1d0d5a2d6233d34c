import { z } from 'zod';

/**
 * Text that YAML or `${ENV}` may have typed: a number or a boolean written unquoted is taken as
 * the text it was written as (integers that would lose digits are already kept as text), so
 * `clientCredentialsClientSecret: 123456` is the secret "123456", not a type error.
 */
export const text = () =>
  z.preprocess(
    (v) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v),
    z.string(),
  );

/**
 * A list as light-4j reads one: a YAML list, a JSON list in a string (`["/a","/b"]`), or
 * comma-separated text (`/a, /b`); empty text is an empty list.
 */
export function listOf<T>(item: z.ZodType<T>) {
  return z.preprocess((v) => (typeof v === 'string' ? splitList(v) : v), z.array(item));
}

/**
 * A map as light-4j reads one: a YAML map, a JSON map in a string (`{"a":"b"}`), or
 * `key=value&key2=value2` text; empty text is an empty map.
 */
export function mapOf<T>(value: z.ZodType<T>) {
  return z.preprocess(
    (v) => (typeof v === 'string' ? splitMap(v) : v),
    z.record(z.string(), value),
  );
}

function splitList(raw: string): unknown {
  const s = raw.trim();
  if (s === '') return [];
  if (s.startsWith('[')) return parseJson(s);
  return s.split(/\s*,\s*/);
}

function splitMap(raw: string): unknown {
  const s = raw.trim();
  if (s === '') return {};
  if (s.startsWith('{')) return parseJson(s);
  const map: Record<string, string> = {};
  for (const pair of s.split(/\s*&\s*/)) {
    const eq = pair.indexOf('=');
    // Not `key=value`: left as text, so the schema answers "expected record".
    if (eq <= 0) return raw;
    map[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return map;
}

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return s;
  }
}
