import path from 'node:path';
import { loadServiceConfig, createLogger, type ServiceConfig } from '@chain/runtime';
import { CERTS, configDir, ROOT } from './service-process';

/**
 * The checked config of a service as it starts: its bundled folder overridden by the given
 * files (name -> YAML text), exactly as CONFIG_DIR would.
 */
export function serviceConfig(name: string, files: Record<string, string> = {}): ServiceConfig {
  return loadServiceConfig({
    bundledDir: path.join(ROOT, 'services', name, 'config'),
    overrideDir: configDir(files),
    env: process.env,
  });
}

/** A logger that writes nowhere (tests assert on answers, not on log noise). */
export const silentLogger = () => createLogger('test', 'silent');

/** security.yml with JWT verification on, certificates from the generated dev set. */
export const SECURITY_ON = `enableVerifyJwt: true
jwt:
  certificate:
    '100': ${CERTS}/primary.crt
    '101': ${CERTS}/secondary.crt
`;
