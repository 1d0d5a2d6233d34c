// The load generator (scripts/bench/load.mjs: autocannon) in its own process, so that it never
// shares the event loop of the runner or of the services; resolves with the figures the table
// needs, and the CPU the load generator itself used.
import path from 'node:path';
import { CERTS, runToExit } from '@chain/testkit';
import { BENCH_DIR } from './paths.mjs';

/**
 * Loads `url` for `durationS` seconds over `connections` keep-alive connections, presenting the
 * client certificate `client` ({cert, key}: PEM file paths) when given. Resolves with
 * {rps, p50, p99, total, ok, failed, errors, non2xx, timeouts, durationMs, cpuMs}; rejects when
 * the load generator fails (or has not ended a minute after its load).
 */
export async function autocannon(url, { connections, durationS, headers = {}, rate, client }) {
  const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['--header', `${k}: ${v}`]);
  const { code, stdout, stderr } = await runToExit(path.join(BENCH_DIR, 'load.mjs'), {
    args: [
      '--url',
      url,
      '--connections',
      String(connections),
      '--duration',
      String(durationS),
      ...(rate ? ['--rate', String(rate)] : []),
      ...headerArgs,
      ...(client ? ['--client-cert', client.cert, '--client-key', client.key] : []),
    ],
    env: { NODE_EXTRA_CA_CERTS: path.join(CERTS, 'ca.crt') },
    timeoutMs: (durationS + 60) * 1000,
  });
  if (code !== 0) {
    throw new Error(`the load generator exited with ${code}: ${stderr.slice(-2000)}`);
  }
  const r = JSON.parse(stdout);
  return { ...r, failed: r.errors + r.timeouts + r.non2xx };
}
