import path from 'node:path';
import {
  loadServiceConfig,
  createLogger,
  type Framework,
  type ServiceConfig,
} from '@chain/runtime';
import { configDir, ROOT } from '@chain/testkit';

/**
 * The host the service suites run on. vitest.config.ts runs every service suite twice: on the
 * native host (the default) and with `TEST_FRAMEWORK=express` on the Express host.
 */
export const TEST_FRAMEWORK: Framework =
  process.env.TEST_FRAMEWORK === 'express' ? 'express' : 'native';

/**
 * The checked config of a service as it starts: its bundled folder overridden by the given
 * files (name -> YAML text), exactly as CONFIG_DIR would, on the suite's host unless the files'
 * server.yml names one (`framework` itself is tested where server.yml is).
 */
export function serviceConfig(
  name: string,
  files: Record<string, string> = {},
  framework: Framework = TEST_FRAMEWORK,
): ServiceConfig {
  const config = loadServiceConfig({
    bundledDir: path.join(ROOT, 'services', name, 'config'),
    overrideDir: configDir(files),
    env: process.env,
  });
  if (/^framework:/m.test(files['server.yml'] ?? '')) return config;
  return { ...config, server: { ...config.server, framework } };
}

/** A logger that writes nowhere (tests assert on answers, not on log noise). */
export const silentLogger = () => createLogger('test', 'silent');
