#!/usr/bin/env node
// What metrics cost a request while InfluxDB is down (issue 5): api-d (built, `pnpm build`) is
// started twice on loopback, once with metrics off and once with metrics on pointing at a dead
// InfluxDB port and reporting every 200 ms, so writes keep failing during the load. autocannon,
// in a separate process, sends the same number of GET /v1/data to each, in alternating rounds;
// the script prints the latency per mode and the on/off ratios, and fails when a
// request failed or the reporter did not really try (and fail) to write.
//
//   node scripts/bench/metrics-overhead.mjs [--quick] [--amount N] [--connections N] [--rounds N]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const certs = process.env.CERTS_DIR ?? path.join(root, 'certs');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const quick = args.includes('--quick');
const amount = option('amount', quick ? 500 : 4000);
const connections = option('connections', 10);
const rounds = option('rounds', quick ? 1 : 5);
const autocannon = createRequire(path.join(root, 'package.json')).resolve(
  'autocannon/autocannon.js',
);
const entry = path.join(root, 'services', 'api-d', 'dist', 'index.js');
if (!fs.existsSync(entry)) {
  console.error(`${entry} is missing: run pnpm build first`);
  process.exit(2);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function configDir(metricsYml) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-metrics-'));
  fs.writeFileSync(
    path.join(dir, 'server.yml'),
    `serviceId: com.networknt.apid-1.0.0\nhttpsPort: 0\nip: 127.0.0.1\nkeyFile: ${certs}/server.key\ncertFile: ${certs}/server.crt\n`,
  );
  fs.writeFileSync(path.join(dir, 'metrics.yml'), metricsYml);
  return dir;
}

/** Starts api-d with the given metrics.yml; resolves once it logs its port. */
function startService(mode, metricsYml) {
  const child = spawn(process.execPath, [entry], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      CERTS_DIR: certs,
      CONFIG_DIR: configDir(metricsYml),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = [];
  let buffer = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${mode}: api-d did not start\n${stderr}`)),
      15000,
    );
    child.once('exit', (code) =>
      reject(new Error(`${mode}: api-d exited with ${code}\n${stderr}`)),
    );
    child.stdout.on('data', (d) => {
      buffer += d;
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        lines.push(line);
        const event = JSON.parse(line);
        if (event.protocol === 'https' && /listening/.test(event.msg ?? '')) {
          clearTimeout(timer);
          resolve({
            mode,
            port: event.port,
            lines,
            stop: () =>
              new Promise((done) => {
                child.once('exit', done);
                child.kill('SIGTERM');
              }),
          });
        }
      }
    });
  });
}

/** One autocannon run in its own process; resolves with its JSON result. */
function load(port, count) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        autocannon,
        '-j',
        '-n',
        '-c',
        String(connections),
        '-a',
        String(count),
        `https://localhost:${port}/v1/data`,
      ],
      {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(certs, 'ca.crt') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`autocannon exited with ${code}: ${err}`));
      else resolve(JSON.parse(out));
    });
  });
}

const deadPort = await freePort(); // released: nothing listens there
const off = await startService('metrics off', 'enabled: false\n');
const on = await startService(
  'metrics on, InfluxDB down',
  `enabled: true\ninfluxdbHost: 127.0.0.1\ninfluxdbPort: ${deadPort}\ninfluxdbName: bench\ninfluxdbUser: bench\ninfluxdbPass: bench-secret\nreportInMinutes: 1\nreportIntervalMs: 200\n`,
);
const results = { [off.mode]: [], [on.mode]: [] };
try {
  // Warm both up (JIT, TLS session), then alternate so drift hits both modes alike.
  await load(off.port, Math.min(500, amount));
  await load(on.port, Math.min(500, amount));
  for (let round = 0; round < rounds; round++) {
    for (const service of round % 2 === 0 ? [off, on] : [on, off]) {
      results[service.mode].push(await load(service.port, amount));
    }
  }
} finally {
  await Promise.all([off.stop(), on.stop()]);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const summary = (runs) => ({
  requests: runs.reduce((n, r) => n + r.requests.total, 0),
  failed: runs.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0),
  meanMs: median(runs.map((r) => r.latency.average)),
  p50Ms: median(runs.map((r) => r.latency.p50)),
  p99Ms: median(runs.map((r) => r.latency.p99)),
});
const a = summary(results[off.mode]);
const b = summary(results[on.mode]);
const failedReports = on.lines.filter((l) => l.includes('cannot report to InfluxDB')).length;
const leaked = on.lines.some((l) => l.includes('bench-secret'));

console.log(
  `GET /v1/data on api-d, ${rounds} round(s) x ${amount} requests, ${connections} connections, medians of the rounds`,
);
console.table({ [off.mode]: a, [on.mode]: b });
const ratio = (x, y) => (y === 0 ? NaN : x / y);
console.log(
  `ratio on/off: mean latency ${ratio(b.meanMs, a.meanMs).toFixed(3)}, p99 ${ratio(b.p99Ms, a.p99Ms).toFixed(3)}`,
);
console.log(
  `failed InfluxDB reports logged during the run: ${failedReports}; password in a log line: ${leaked}`,
);

const problems = [];
if (a.failed || b.failed) problems.push(`${a.failed + b.failed} request(s) failed`);
if (failedReports === 0) problems.push('the reporter never tried (and failed) to write');
if (leaked) problems.push('the InfluxDB password appeared in a log line');
if (problems.length) {
  console.error(`FAIL: ${problems.join('; ')}`);
  process.exit(1);
}
