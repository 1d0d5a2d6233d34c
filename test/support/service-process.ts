import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const CERTS = path.join(ROOT, 'certs');

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  /** The HTTPS port the service logged (server.yml port 0 picks a free one). */
  port: number;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
  stderr: () => string;
  /** SIGTERM, then waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Makes a temporary folder holding the given files (name -> content). */
export function configDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-config-'));
  for (const [name, content] of Object.entries(files))
    fs.writeFileSync(path.join(dir, name), content);
  return dir;
}

/**
 * Starts a built service (`services/<name>/dist/index.js`) as a real process with CONFIG_DIR
 * set, and waits until it logs that it listens. `script` overrides the entry file.
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
  const script = options.script ?? path.join(ROOT, 'services', name, 'dist', 'index.js');
  const child = spawn(process.execPath, [script], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      CERTS_DIR: CERTS,
      ...(options.configDir
        ? { CONFIG_DIR: options.configDir }
        : { CONFIG_DIR: '/nonexistent-config' }),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  let buffer = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start in time:\n${lines.join('\n')}\n${stderr}`));
    }, options.timeoutMs ?? 15000);
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        lines.push(line);
        try {
          const event = JSON.parse(line) as { msg?: string; port?: number; protocol?: string };
          if (
            event.protocol === 'https' &&
            typeof event.port === 'number' &&
            /listening/.test(event.msg ?? '')
          ) {
            clearTimeout(timer);
            resolve({
              name,
              child,
              port: event.port,
              lines,
              stderr: () => stderr,
              stop: async () => {
                if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
                return exited;
              },
            });
          }
        } catch {
          // not a JSON line
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(
        new Error(`${name} exited with ${code} before listening:\n${lines.join('\n')}\n${stderr}`),
      );
    });
  });
}

/** Runs a service expecting it to refuse to start; resolves with its exit code and stderr. */
export function startExpectingFailure(
  name: string,
  configDirPath: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const script = path.join(ROOT, 'services', name, 'dist', 'index.js');
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, CERTS_DIR: CERTS, CONFIG_DIR: configDirPath, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}
