import { distance } from 'fastest-levenshtein';
import { z } from 'zod';

interface JsonSchema {
  properties?: Record<string, JsonSchema>;
}

/** The keys of the object at `path`, as a file writes them (zod's JSON Schema of the input). */
export function schemaKeysAt(schema: z.ZodType, path: readonly (string | number)[]): string[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  let node = json as JsonSchema | undefined;
  for (const part of path) node = node?.properties?.[String(part)];
  return Object.keys(node?.properties ?? {});
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
