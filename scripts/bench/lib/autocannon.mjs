// The load generator (scripts/bench/load.mjs: autocannon) in its own process, so that it never
// shares the event loop of the runner or of the services; resolves with the figures the table
// needs, and the CPU the load generator itself used.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { BENCH_DIR, CERTS } from './paths.mjs';
import { outputOf } from './processes.mjs';

/**
 * Loads `url` for `durationS` seconds over `connections` keep-alive connections. Resolves with
 * {rps, p50, p99, total, ok, failed, errors, non2xx, timeouts, cpuMs}; rejects when the load
 * generator fails.
 */
export function autocannon(url, { connections, durationS, headers = {}, rate }) {
  const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['--header', `${k}: ${v}`]);
  const child = spawn(
    process.execPath,
    [
      path.join(BENCH_DIR, 'load.mjs'),
      '--url',
      url,
      '--connections',
      String(connections),
      '--duration',
      String(durationS),
      ...(rate ? ['--rate', String(rate)] : []),
      ...headerArgs,
    ],
    {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(CERTS, 'ca.crt') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return outputOf(child).then(({ code, out, err }) => {
    if (code !== 0) {
      throw new Error(`the load generator exited with ${code}: ${err.slice(-2000)}`);
    }
    const r = JSON.parse(out);
    return { ...r, failed: r.errors + r.timeouts + r.non2xx };
  });
}
