// One Jest run over every package and service. Tests import the workspace packages from their
// sources (moduleNameMapper), so unit tests need no build; end-to-end tests start the built
// services (dist/), which `pnpm test` builds first.
const packages = ['config', 'security', 'openapi', 'oauth-client', 'metrics', 'runtime', 'chain'];
const services = ['api-a', 'api-b', 'api-c', 'api-d', 'petstore', 'token-server'];

const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/../../tsconfig.test.json' }] },
  moduleNameMapper: { '^@chain/(.*)$': '<rootDir>/../../packages/$1/src' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    ...packages.map((p) => ({ ...base, displayName: p, rootDir: `packages/${p}` })),
    ...services.map((s) => ({ ...base, displayName: s, rootDir: `services/${s}` })),
    {
      ...base,
      displayName: 'e2e',
      rootDir: 'test',
      testMatch: ['<rootDir>/**/*.test.ts'],
      transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/../tsconfig.test.json' }] },
      moduleNameMapper: { '^@chain/(.*)$': '<rootDir>/../packages/$1/src' },
    },
  ],
  collectCoverageFrom: ['packages/*/src/**/*.ts'],
  coverageThreshold: {
    './packages/security/src/': { lines: 90, branches: 90 },
    './packages/oauth-client/src/': { lines: 90, branches: 90 },
  },
};
