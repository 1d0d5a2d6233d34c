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
import path from 'node:path';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

const root = import.meta.dirname;
const packages = ['errors', 'config', 'security', 'openapi', 'oauth-client', 'metrics'];
packages.push('runtime', 'chain', 'testkit');
const services = ['api-a', 'api-b', 'api-c', 'api-d', 'petstore', 'token-server'];
const onBothHosts = ['packages/chain', 'services/api-a', 'services/api-b', 'services/api-c'];
onBothHosts.push('services/api-d', 'services/petstore');

const project = (
  name: string,
  folder: string,
  env: Record<string, string> = {},
): TestProjectInlineConfiguration => ({
  extends: true,
  test: { name, include: [`${folder}/**/*.test.ts`], env },
});

/**
 * After every unit and service suite, one file at a time: the end-to-end suites start whole
 * chains of processes, InfluxDB and Prometheus, and time what they do; two at once on two cores
 * starve each other's time-outs.
 */
const alone = (name: string, folder: string): TestProjectInlineConfiguration => ({
  extends: true,
  test: {
    name,
    include: [`${folder}/**/*.test.ts`],
    fileParallelism: false,
    sequence: { groupOrder: 1 },
  },
});

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
    // Every temporary folder of the run under one, removed at its end (test/support/temp-root.ts).
    globalSetup: ['test/support/temp-root.ts'],
    projects: [
      ...packages.map((p) => project(p, `packages/${p}/test`)),
      ...services.map((s) => project(s, `services/${s}/test`)),
      ...onBothHosts.map((f) =>
        project(`${f.split('/')[1]} (express)`, `${f}/test`, { TEST_FRAMEWORK: 'express' }),
      ),
      alone('e2e', 'test/e2e'),
      alone('docs', 'test/docs'),
      alone('kubernetes', 'test/kubernetes'),
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
        'packages/runtime/src/**': { lines: 90 },
        'packages/chain/src/**': { lines: 90 },
      },
    },
  },
});
