// One Jest run over every package and service. Tests import the workspace packages from their
// sources (moduleNameMapper), so unit tests need no build; end-to-end tests start the built
// services (dist/), which `pnpm test` builds first. Every project's rootDir is the repository
// root (its tests are found under `roots`), so coverage of packages/*/src counts what every
// project exercises, the services' and end-to-end suites included.
const packages = ['config', 'security', 'openapi', 'oauth-client', 'metrics', 'runtime', 'chain'];
const services = ['api-a', 'api-b', 'api-c', 'api-d', 'petstore', 'token-server'];

const project = (displayName, folder, testDir = `${folder}/test`) => ({
  displayName,
  rootDir: __dirname,
  roots: [`<rootDir>/${folder}`],
  testMatch: [`<rootDir>/${testDir}/**/*.test.ts`],
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }] },
  moduleNameMapper: { '^@chain/(.*)$': '<rootDir>/packages/$1/src' },
});

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    ...packages.map((p) => project(p, `packages/${p}`)),
    ...services.map((s) => project(s, `services/${s}`)),
    project('e2e', 'test', 'test/e2e'),
  ],
  collectCoverageFrom: ['packages/*/src/**/*.ts', '!packages/testkit/**'],
  coverageThreshold: {
    './packages/security/src/': { lines: 95, branches: 95 },
    './packages/oauth-client/src/': { lines: 90, branches: 90 },
  },
};
