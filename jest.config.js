// One Jest run over every package and service. Tests import the workspace packages from their
// sources (moduleNameMapper), so unit tests need no build; end-to-end tests start the built
// services (dist/), which `pnpm test` builds first. Every project's rootDir is the repository
// root (its tests are found under `roots`), so coverage of packages/*/src counts what every
// project exercises, the services' and end-to-end suites included.
//
// The suites of the services that run the request pipeline (and of @chain/chain) run twice:
// on the native host, and as "<name> (express)" on the Express host (server.yml `framework`).
// ts-jest only transpiles (isolatedModules); `tsc -p tsconfig.test.json` type-checks the tests.
require('./scripts/lib/node-version.cjs'); // Node 24 or later, else one line and exit 1
const packages = [
  'errors',
  'config',
  'security',
  'openapi',
  'oauth-client',
  'metrics',
  'runtime',
  'chain',
  'testkit',
];
const services = ['api-a', 'api-b', 'api-c', 'api-d', 'petstore', 'token-server'];
const onBothHosts = ['packages/chain', 'services/api-a', 'services/api-b', 'services/api-c'];
onBothHosts.push('services/api-d', 'services/petstore');

const project = (displayName, folder, testDir = `${folder}/test`) => ({
  displayName,
  rootDir: __dirname,
  roots: [`<rootDir>/${folder}`],
  testMatch: [`<rootDir>/${testDir}/**/*.test.ts`],
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }] },
  moduleNameMapper: { '^@chain/(.*)$': '<rootDir>/packages/$1/src' },
});

const onExpress = (folder) => ({
  ...project(`${folder.split('/')[1]} (express)`, folder),
  setupFiles: ['<rootDir>/test/support/express-host.cjs'],
});

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    ...packages.map((p) => project(p, `packages/${p}`)),
    ...services.map((s) => project(s, `services/${s}`)),
    ...onBothHosts.map(onExpress),
    project('e2e', 'test', 'test/e2e'),
    project('docs', 'test', 'test/docs'),
    project('kubernetes', 'test', 'test/kubernetes'),
  ],
  // Every temporary folder of the run under one, removed at its end (test/support/temp-root.cjs).
  globalSetup: '<rootDir>/test/support/temp-root-setup.cjs',
  globalTeardown: '<rootDir>/test/support/temp-root-teardown.cjs',
  collectCoverageFrom: ['packages/*/src/**/*.ts', '!packages/testkit/**'],
  coverageThreshold: {
    './packages/errors/src/': { lines: 100, branches: 100 },
    './packages/security/src/': { lines: 95, branches: 95 },
    './packages/oauth-client/src/': { lines: 95, branches: 90 },
    './packages/runtime/src/': { lines: 90 },
    './packages/chain/src/': { lines: 90 },
  },
};
