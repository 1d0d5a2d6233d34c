import { z } from 'zod';

/** Text that YAML or `${ENV}` typed as a number or boolean is the text written (`secret: 123`). */
export const text = () =>
  z.preprocess(
    (v) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v),
    z.string(),
  );

/** Where a shared store listens: `redis://[user:pass@]host:port[/db]` (or `rediss://`, TLS). */
export const redisUrl = () =>
  z.string().regex(/^rediss?:\/\/[^/]+/, 'must be a redis:// or rediss:// URL naming a host');

/** A list as light-4j reads one: a YAML list, a JSON list in text, or `/a, /b`; '' is none. */
export function listOf<T>(item: z.ZodType<T>) {
  const split = (s: string) =>
    s === '' ? [] : s.startsWith('[') ? parseJson(s) : s.split(/\s*,\s*/);
  return z.preprocess((v) => (typeof v === 'string' ? split(v.trim()) : v), z.array(item));
}

/** A map as light-4j reads one: a YAML map, a JSON map in text, or `a=b&c=d`; '' is none. */
export function mapOf<T>(value: z.ZodType<T>) {
  return z.preprocess(
    (v) => (typeof v === 'string' ? splitMap(v) : v),
    z.record(z.string(), value),
  );
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
