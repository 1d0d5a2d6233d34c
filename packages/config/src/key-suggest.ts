import type { z } from 'zod';

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The object schema under wrappers (default, optional, a preprocess pipe, ...), if any. */
function objectOf(schema: z.ZodType | undefined, depth = 0): Def | undefined {
  if (!schema || depth > 16) return undefined;
  const def = defOf(schema);
  if (def.type === 'object') return def;
  if (def.innerType) return objectOf(def.innerType, depth + 1);
  if (def.type === 'pipe') return objectOf(def.out, depth + 1) ?? objectOf(def.in, depth + 1);
  return undefined;
}

/** The keys an object schema declares at a path of nested objects (none when it is not one). */
export function schemaKeysAt(schema: z.ZodType, path: readonly (string | number)[]): string[] {
  let def = objectOf(schema);
  for (const part of path) {
    def = objectOf(def?.shape?.[String(part)]);
  }
  return Object.keys(def?.shape ?? {});
}

/** Levenshtein distance, case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let previous = Array.from({ length: t.length + 1 }, (_v, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
    }
    previous = current;
  }
  return previous[t.length];
}

function commonPrefix(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let i = 0;
  while (i < s.length && i < t.length && s[i] === t[i]) i++;
  return i;
}

/**
 * The known key closest to a misspelled one, when close enough to be a slip: a third of its
 * letters changed at most (at least two), or the first half of it the same
 * (`enableVerifyJWT` -> `enableVerifyJwt`, `reportInSeconds` -> `reportInMinutes`).
 */
export function closestKey(unknown: string, known: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(unknown.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of new Set(known)) {
    const d = editDistance(unknown, candidate);
    const close = d <= limit || commonPrefix(unknown, candidate) * 2 >= unknown.length;
    if (close && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}
