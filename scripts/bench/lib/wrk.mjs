// wrk (C, one thread, epoll) as a second load generator: it takes a fraction of the CPU that
// autocannon takes for the same requests, which matters on a small machine where the load
// generator shares the cores with what it measures (the `workers` case). Debian and Ubuntu:
// `apt-get install wrk`. Resolves with the same figures as autocannon.mjs.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { BENCH_DIR } from './paths.mjs';

/**
 * Resolves, once `child` (spawned with stdout and stderr piped) has exited, with its exit code
 * and everything it wrote; rejects when it could not be started.
 */
function outputOf(child) {
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, out, err }));
  });
}

/** Whether a `wrk` runs here. */
export function wrkAvailable() {
  const r = spawnSync('wrk', ['--version'], { stdio: 'ignore' });
  return r.error === undefined;
}

/** `times`' children line ("0m1.250s 0m0.310s"): user + system CPU in ms. */
export function childrenCpuMs(line) {
  const ms = (t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t);
    if (!m) throw new Error(`not a time of the shell's times: ${t}`);
    return Number(m[1]) * 60_000 + Number(m[2]) * 1000;
  };
  const [user, system] = line.trim().split(/\s+/);
  return ms(user) + ms(system);
}

/**
 * Loads `url` for `durationS` seconds over `connections` keep-alive connections with wrk (one
 * thread). Resolves with {rps, p50, p99, total, ok, failed, errors, non2xx, timeouts, durationMs,
 * cpuMs}; rejects when wrk fails or cannot connect.
 */
export function wrk(url, { connections, durationS, headers = {} }) {
  const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const args = [
    '-t1',
    `-c${connections}`,
    `-d${durationS}s`,
    '-s',
    path.join(BENCH_DIR, 'lib', 'wrk-report.lua'),
    ...headerArgs,
    url,
  ];
  // The shell's `times` gives the CPU wrk used (its children line), on stderr after wrk's own.
  const child = spawn('bash', ['-c', 'wrk "$@"; code=$?; times >&2; exit $code', 'wrk', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return outputOf(child).then(({ code, out, err }) => {
    const json = out.split('\n').find((l) => l.startsWith('{'));
    if (code !== 0 || json === undefined) {
      throw new Error(`wrk exited with ${code}: ${(out + err).slice(-2000)}`);
    }
    const r = JSON.parse(json);
    const errors = r.connect + r.read + r.write;
    const durationMs = r.durationUs / 1000;
    return {
      rps: r.total / (durationMs / 1000),
      p50: r.p50Us / 1000,
      p99: r.p99Us / 1000,
      total: r.total,
      ok: r.total - r.status,
      errors,
      timeouts: r.timeout,
      non2xx: r.status,
      durationMs,
      cpuMs: childrenCpuMs(err.trim().split('\n').pop()),
      failed: errors + r.timeout + r.status,
    };
  });
}
