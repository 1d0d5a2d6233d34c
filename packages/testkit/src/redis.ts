import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { CERTS } from './paths.js';

export interface Redis {
  /** `redis://127.0.0.1:<port>`; with `tls`, `rediss://localhost:<port>`. */
  url: string;
  port: number;
  /** Stops it (SIGTERM) and removes its folder; it can be stopped once. */
  stop(): Promise<void>;
}

/**
 * A real redis-server (scripts/test-infra.sh installs it) on a free loopback port (or `port`: one
 * that was stopped, to bring it back empty), with its own folder and nothing saved; resolves once
 * it accepts connections. `tls`: TLS only, with certs/server.crt (the chain's CA); `clientCertificates`
 * too: a client must present one the CA signed.
 */
export async function startRedis({
  port: given,
  tls,
}: { port?: number; tls?: { clientCertificates: boolean } } = {}): Promise<Redis> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-e2e-'));
  const port = given ?? (await freePort());
  const listen = tls
    ? [
        ...['--port', '0', '--tls-port', String(port)],
        ...['--tls-cert-file', `${CERTS}/server.crt`, '--tls-key-file', `${CERTS}/server.key`],
        ...['--tls-ca-cert-file', `${CERTS}/ca.crt`],
        ...['--tls-auth-clients', tls.clientCertificates ? 'yes' : 'no'],
      ]
    : ['--port', String(port)];
  const args = [...listen, '--bind', '127.0.0.1', '--save', '', '--dir', dir];
  const child = spawn('redis-server', [...args, '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    child.once('error', () =>
      reject(new Error('redis-server is not installed: run scripts/test-infra.sh')),
    );
    child.once('exit', () => reject(new Error(`redis-server exited: ${output}`)));
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
  });
  let stopped: Promise<void> | undefined;
  return {
    url: tls ? `rediss://localhost:${port}` : `redis://127.0.0.1:${port}`,
    port,
    stop: () =>
      (stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
        fs.rmSync(dir, { recursive: true, force: true });
      })()),
  };
}
