// autocannon in its own process (the load generator must not share the event loop of the
// runner or of the services), CLI with -j; resolves with the figures the table needs.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { CERTS, ROOT } from './paths.mjs';

const AUTOCANNON = createRequire(path.join(ROOT, 'package.json')).resolve(
  'autocannon/autocannon.js',
);

/**
 * Loads `url` for `durationS` seconds over `connections` keep-alive connections. Resolves with
 * {rps, p50, p99, total, failed, errors, non2xx, timeouts}; rejects when autocannon fails.
 */
export function autocannon(url, { connections, durationS, headers = {} }) {
  const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]);
  const child = spawn(
    process.execPath,
    [AUTOCANNON, '-j', '-c', String(connections), '-d', String(durationS), ...headerArgs, url],
    {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(CERTS, 'ca.crt') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (code !== 0)
        return reject(new Error(`autocannon exited with ${code}: ${err.slice(-2000)}`));
      const r = JSON.parse(out);
      resolve({
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        total: r.requests.total,
        ok: r['2xx'],
        errors: r.errors,
        timeouts: r.timeouts,
        non2xx: r.non2xx,
        failed: r.errors + r.timeouts + r.non2xx,
      });
    });
  });
}
