import fs from 'node:fs';

// The Dockerfiles, read as plain data for the compose tests.

export interface Dockerfile {
  /** Instructions with continuation lines joined, comments dropped: [keyword, arguments]. */
  instructions: [string, string][];
  /** The instructions of the last stage (the image that runs). */
  final: [string, string][];
}

export function readDockerfile(file: string): Dockerfile {
  const joined = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const instructions = joined
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l): [string, string] => {
      const [keyword, ...rest] = l.split(/\s+/);
      return [keyword.toUpperCase(), rest.join(' ')];
    });
  const lastFrom = instructions.map(([k]) => k).lastIndexOf('FROM');
  return { instructions, final: instructions.slice(lastFrom) };
}

/** Arguments of the instructions with this keyword. */
export const args = (instructions: [string, string][], keyword: string): string[] =>
  instructions.filter(([k]) => k === keyword).map(([, a]) => a);
