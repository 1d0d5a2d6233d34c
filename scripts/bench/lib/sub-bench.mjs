// The sub-benchmarks (security-route.mjs: the route case; metrics-overhead.mjs: metrics with
// InfluxDB down), run as their own processes and merged into the one table. The row contract is in
// scripts/bench/README.md: `--json <file>` writes an array of rows; else `BENCH_ROW {...}`
// stdout lines; else, for the versions that print only a human table, the rows are read from it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH_DIR } from './paths.mjs';

/** Runs `scripts/bench/<name>.mjs`; resolves with {rows, code, stdout}. Progress is echoed. */
export function runSubBench(name, args, log) {
  const script = path.join(BENCH_DIR, `${name}.mjs`);
  if (!fs.existsSync(script)) return Promise.resolve({ rows: [], code: 'missing', stdout: '' });
  const jsonFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sub-')), 'rows.json');
  const child = spawn(process.execPath, [script, '--json', jsonFile, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let pending = '';
  const echo = (d) => {
    pending += d;
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line.trim()) log(`  [${name}] ${line}`);
    }
  };
  child.stdout.on('data', (d) => {
    stdout += d;
    echo(d);
  });
  child.stderr.on('data', echo);
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      let rows = [];
      if (fs.existsSync(jsonFile)) rows = JSON.parse(fs.readFileSync(jsonFile, 'utf8'));
      if (!rows.length) rows = rowsFromStdout(name, stdout);
      resolve({ rows, code, stdout });
    });
  });
}

function rowsFromStdout(name, stdout) {
  const tagged = stdout
    .split('\n')
    .filter((l) => l.startsWith('BENCH_ROW '))
    .map((l) => JSON.parse(l.slice('BENCH_ROW '.length)));
  if (tagged.length) return tagged;
  if (name === 'security-route') return securityRouteTable(stdout);
  if (name === 'metrics-overhead') return metricsOverheadSummary(stdout);
  return [];
}

// security-route.mjs: `<case>  <req/s>  <p99 ms>  <ratio>x  <rounds>`.
function securityRouteTable(stdout) {
  const names = [
    'none',
    'chain-security cache on',
    'chain-security cache off',
    'express-oauth2-jwt-bearer',
  ];
  const rows = [];
  for (const line of stdout.split('\n')) {
    const name = names.find((n) => line.startsWith(n + ' '));
    const m = name && /^\s+(\d+)\s+([\d.]+)\s+([\d.]+)x/.exec(line.slice(name.length));
    if (!m) continue;
    rows.push({
      case: name,
      rps: Number(m[1]),
      p50: null,
      p99: Number(m[2]),
      rssMb: null,
      baseline: name === 'express-oauth2-jwt-bearer' ? null : 'express-oauth2-jwt-bearer',
      ratio: name === 'express-oauth2-jwt-bearer' ? null : Number(m[3]),
    });
  }
  return rows;
}

// metrics-overhead.mjs: `ratio on/off: mean latency X, p99 Y`.
function metricsOverheadSummary(stdout) {
  const m = /ratio on\/off: mean latency ([\d.]+), p99 ([\d.]+)/.exec(stdout);
  if (!m) return [];
  return [
    {
      case: 'metrics on (InfluxDB down)',
      rps: null,
      p50: null,
      p99: null,
      rssMb: null,
      baseline: 'metrics off',
      ratio: Number(m[1]),
      metric: 'mean latency',
      p99Ratio: Number(m[2]),
    },
  ];
}
