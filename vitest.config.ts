// One Vitest run over every package and service, as projects. Tests import the workspace
// packages from their sources (the @chain/* alias), so unit tests need no build; end-to-end
// tests start the built services (dist/), which `pnpm test` builds first. Coverage of
// packages/*/src counts what every project exercises, the services' and end-to-end suites
// included.
//
// The suites of the services that run the request pipeline (and of @chain/chain) run twice: on
// the native host, and as "<name> (express)" on the Express host (server.yml `framework`).
// Vitest only transpiles; `tsc -p tsconfig.test.json` type-checks the tests.
import './scripts/lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import os from 'node:os';
import path from 'node:path';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

const root = import.meta.dirname;
const packages = ['errors', 'config', 'security', 'openapi', 'http', 'oauth-client', 'metrics'];
packages.push('runtime', 'chain', 'testkit');
const services = ['api-a', 'api-b', 'api-c', 'api-d', 'petstore', 'token-server'];
const onBothHosts = ['packages/chain', 'services/api-a', 'services/api-b', 'services/api-c'];
onBothHosts.push('services/api-d', 'services/petstore');

/**
 * The unit and service files of a project share their worker's modules with the files it ran
 * before (`isolate: false`): a fresh process per file spent more time starting and importing
 * than testing. These files change a module or the process for good, so each runs in a process
 * of its own, in the project "<name> (isolated)": they mock jose to count its calls, or install
 * the process's fatal-error handlers once.
 */
const isolated = ['dpop-proof', 'jwt-verifier', 'request-guard', 'token-binding']
  .map((f) => `packages/security/test/${f}.test.ts`)
  .concat('packages/runtime/test/logger.test.ts');

const project = (
  name: string,
  folder: string,
  env: Record<string, string> = {},
): TestProjectInlineConfiguration[] => {
  const own = isolated.filter((f) => f.startsWith(`${folder}/`));
  const shared: TestProjectInlineConfiguration = {
    extends: true,
    test: {
      name,
      include: [`${folder}/**/*.test.ts`],
      exclude: [...configDefaults.exclude, ...own],
      env,
      isolate: false,
    },
  };
  if (own.length === 0) return [shared];
  return [shared, { extends: true, test: { name: `${name} (isolated)`, include: own, env } }];
};

/**
 * After every unit and service suite, the end-to-end, docs and manifest suites: they start
 * whole chains of processes, InfluxDB and Prometheus, and spend most of their time waiting on
 * them, so two files run at a time. The files that load a chain or time what it does (and those
 * that take the chain's fixed ports or rebuild a package) run last, one at a time: two at once
 * on two cores would starve each other's time-outs.
 */
const alone = ['bench', 'key-rotation', 'metrics-outage', 'workers']
  .concat('resilience', 'local-run', 'mtls', 'chain', 'compose-topology')
  // pnpm pack builds the public packages' dist afresh, which the services of others load.
  .concat('pack')
  .map((f) => `test/e2e/${f}.test.ts`);

const late = (name: string, folder: string): TestProjectInlineConfiguration[] => [
  {
    extends: true,
    test: {
      name,
      include: [`${folder}/**/*.test.ts`],
      exclude: [...configDefaults.exclude, ...alone],
      sequence: { groupOrder: 1 },
    },
  },
  ...(alone.some((f) => f.startsWith(`${folder}/`))
    ? [
        {
          extends: true,
          test: {
            name: `${name} (alone)`,
            include: alone,
            fileParallelism: false,
            sequence: { groupOrder: 2 },
          },
        },
      ]
    : []),
];

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@chain\/([a-z-]+)$/, replacement: path.join(root, 'packages/$1/src/index.ts') },
    ],
  },
  test: {
    root,
    globals: true,
    pool: 'forks',
    // A worker per core (Vitest's default leaves one core to itself: one worker on two cores).
    maxWorkers: os.availableParallelism(),
    // Every temporary folder of the run under one, removed at its end (test/support/temp-root.ts).
    globalSetup: ['test/support/temp-root.ts'],
    projects: [
      ...packages.flatMap((p) => project(p, `packages/${p}/test`)),
      ...services.flatMap((s) => project(s, `services/${s}/test`)),
      ...onBothHosts.flatMap((f) =>
        project(`${f.split('/')[1]} (express)`, `${f}/test`, { TEST_FRAMEWORK: 'express' }),
      ),
      ...late('e2e', 'test/e2e'),
      ...late('docs', 'test/docs'),
      ...late('kubernetes', 'test/kubernetes'),
    ],
    coverage: {
      provider: 'v8',
      include: ['packages/*/src/**/*.ts'],
      exclude: ['packages/testkit/**'],
      reporter: ['text-summary', 'text'],
      thresholds: {
        'packages/errors/src/**': { lines: 100, branches: 100 },
        'packages/security/src/**': { lines: 95, branches: 95 },
        'packages/oauth-client/src/**': { lines: 95, branches: 90 },
        'packages/http/src/**': { lines: 95, branches: 90 },
        'packages/runtime/src/**': { lines: 90 },
        'packages/chain/src/**': { lines: 90 },
      },
    },
  },
});
