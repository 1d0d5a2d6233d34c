import { distance } from 'fastest-levenshtein';
import type { z } from 'zod';

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

function objectOf(schema: z.ZodType | undefined, depth = 0): Def | undefined {
  if (!schema || depth > 16) return undefined;
  const def = defOf(schema);
  if (def.type === 'object') return def;
  if (def.innerType) return objectOf(def.innerType, depth + 1);
  if (def.type === 'pipe') return objectOf(def.out, depth + 1) ?? objectOf(def.in, depth + 1);
  return undefined;
}

export function schemaKeysAt(schema: z.ZodType, path: readonly (string | number)[]): string[] {
  let def = objectOf(schema);
  for (const part of path) def = objectOf(def?.shape?.[String(part)]);
  return Object.keys(def?.shape ?? {});
}

function commonPrefix(s: string, t: string): number {
  let i = 0;
  while (i < s.length && i < t.length && s[i] === t[i]) i++;
  return i;
}

/** Close enough to be a slip: a third of its letters changed at most, or its first half the same. */
export function closestKey(unknown: string, known: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(unknown.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  const wrong = unknown.toLowerCase();
  for (const candidate of new Set(known)) {
    const right = candidate.toLowerCase();
    const d = distance(wrong, right);
    const close = d <= limit || commonPrefix(wrong, right) * 2 >= unknown.length;
    if (close && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}
