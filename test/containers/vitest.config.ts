// The container test, run by scripts/test-containers.sh on a real Docker engine (not part of the
// main run: it builds images and publishes the services' fixed ports).
import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

// Without the main run's projects and coverage (left out, not set to undefined: Vitest reads them).
const { projects: _projects, coverage: _coverage, ...test } = base.test ?? {};

export default mergeConfig(
  { ...base, test },
  defineConfig({
    test: {
      name: 'containers',
      include: ['test/containers/**/*.test.ts'],
      // One suite at a time: both use the one engine and build the same images.
      fileParallelism: false,
      reporters: ['verbose'],
    },
  }),
);
