import { CERTS, serviceEntry } from './paths.js';
import { runToExit, startProcess, type RunningProcess } from './processes.js';

/** A built service running as a real process. */
export type ServiceProcess = RunningProcess;

export interface ServiceOptions {
  /** CONFIG_DIR; a folder that does not exist when none is given (bundled config only). */
  configDir?: string;
  /** Merged over NODE_ENV=test, CERTS_DIR and CONFIG_DIR. */
  env?: NodeJS.ProcessEnv;
  /** The entry file (default `services/<name>/dist/index.js` of `root`). */
  script?: string;
  /** Another checkout's root whose built service runs (the bench's `--base`). */
  root?: string;
  timeoutMs?: number;
  /** Arguments of node before the script (`--cpu-prof`). */
  nodeArgs?: string[];
  /** The node binary (default: the one running this process). */
  node?: string;
  /** A file that also receives the service's output (appended), as `pnpm start` writes logs. */
  logFile?: string;
}

/**
 * Starts a built service (`services/<name>/dist/index.js`) as a real process with CONFIG_DIR
 * set, and waits until it logs that it listens.
 */
export function startService(name: string, options: ServiceOptions = {}): Promise<ServiceProcess> {
  return startProcess(name, options.script ?? serviceEntry(name, options.root), {
    env: {
      NODE_ENV: 'test',
      CERTS_DIR: CERTS,
      CONFIG_DIR: options.configDir ?? '/nonexistent-config',
      ...options.env,
    },
    nodeArgs: options.nodeArgs,
    node: options.node,
    logFile: options.logFile,
    timeoutMs: options.timeoutMs ?? 15000,
  });
}

/** Runs a service expecting it to refuse to start; resolves with its exit code and output. */
export function startExpectingFailure(
  name: string,
  configDirPath: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return runToExit(serviceEntry(name), {
    env: { CERTS_DIR: CERTS, CONFIG_DIR: configDirPath, ...env },
  });
}
