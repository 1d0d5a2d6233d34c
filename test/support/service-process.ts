import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runToExit, startProcess, type RunningProcess } from '../../scripts/lib/processes.cjs';

export const ROOT = path.resolve(__dirname, '..', '..');
export const CERTS = path.join(ROOT, 'certs');

/** A built service running as a real process (scripts/lib/processes.cjs). */
export type ServiceProcess = RunningProcess;

/** Makes a temporary folder holding the given files (name -> content). */
export function configDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-config-'));
  for (const [name, content] of Object.entries(files))
    fs.writeFileSync(path.join(dir, name), content);
  return dir;
}

const entry = (name: string) => path.join(ROOT, 'services', name, 'dist', 'index.js');

/**
 * Starts a built service (`services/<name>/dist/index.js`) as a real process with CONFIG_DIR
 * set (a folder that does not exist when none is given: bundled config only), and waits until
 * it logs that it listens. `script` overrides the entry file.
 */
export function startService(
  name: string,
  options: {
    configDir?: string;
    env?: NodeJS.ProcessEnv;
    script?: string;
    timeoutMs?: number;
  } = {},
): Promise<ServiceProcess> {
  return startProcess(name, options.script ?? entry(name), {
    env: {
      NODE_ENV: 'test',
      CERTS_DIR: CERTS,
      CONFIG_DIR: options.configDir ?? '/nonexistent-config',
      ...options.env,
    },
    timeoutMs: options.timeoutMs ?? 15000,
  });
}

/** Runs a service expecting it to refuse to start; resolves with its exit code and output. */
export function startExpectingFailure(
  name: string,
  configDirPath: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return runToExit(entry(name), { env: { CERTS_DIR: CERTS, CONFIG_DIR: configDirPath, ...env } });
}
