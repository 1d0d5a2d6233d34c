/** The oldest Node major a service runs on: every package.json says `"node": ">=24"`. */
export const NODE_MAJOR = 24;

/** The one line a service says on a Node older than NODE_MAJOR, or undefined. */
export function nodeVersionProblem(version: string = process.versions.node): string | undefined {
  if (Number(version.split('.')[0]) >= NODE_MAJOR) return undefined;
  return (
    `Node ${NODE_MAJOR} or later is needed (this is ${version}): install it your usual way (nvm, ` +
    `fnm, volta, brew or nodejs.org), or in the repository run it through pnpm (pnpm exec node ` +
    `<service>/dist/index.js): pnpm install puts Node ${NODE_MAJOR} into node_modules/.bin on Linux x64`
  );
}

/** The first thing a service does: on an older Node, that line and exit 1 (no stack trace). */
export function exitOnOldNode(version?: string): void {
  const problem = nodeVersionProblem(version);
  if (problem === undefined) return;
  process.stderr.write(`Cannot start: ${problem}\n`);
  process.exit(1);
}

// At import, and the index imports this module first: on Node 20 undici 8 throws while loading,
// so a check in startService would come after a stack trace.
exitOnOldNode();
