// The container test, run by scripts/test-containers.sh on a real Docker engine (not part of the
// main Jest run: it builds images and publishes the services' fixed ports).
module.exports = {
  rootDir: '../..',
  roots: ['<rootDir>/test/containers'],
  testMatch: ['<rootDir>/test/containers/**/*.test.ts'],
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }] },
  moduleNameMapper: { '^@chain/(.*)$': '<rootDir>/packages/$1/src' },
  // Every temporary folder of the run under one, removed at its end (test/support/temp-root.cjs).
  globalSetup: '<rootDir>/test/support/temp-root-setup.cjs',
  globalTeardown: '<rootDir>/test/support/temp-root-teardown.cjs',
  // One suite at a time: both use the one engine and build the same images.
  maxWorkers: 1,
  verbose: true,
};
