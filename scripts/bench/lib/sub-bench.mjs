// The sub-benchmarks (security-route.mjs, metrics-overhead.mjs, telemetry-overhead.mjs,
// workers-scaling.mjs), run as their own processes and merged into the one table. They hand
// their rows over as JSON, in the file `--json <file>` names (the contract in
// scripts/bench/README.md); their stdout is progress for a person, echoed, never read.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH_DIR } from './paths.mjs';

/**
 * The rows a sub-benchmark wrote to `file`: a non-empty JSON array of objects each with a
 * `case` name. Throws naming the script and what is wrong.
 */
export function readRows(name, file) {
  if (!fs.existsSync(file)) throw new Error(`${name}.mjs wrote no rows to its --json file`);
  let rows;
  try {
    rows = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${name}.mjs wrote rows that are not JSON: ${err.message}`, { cause: err });
  }
  const bad = (row) => !row || typeof row !== 'object' || typeof row.case !== 'string';
  if (!Array.isArray(rows) || rows.length === 0 || rows.some(bad)) {
    throw new Error(`${name}.mjs wrote no array of rows with a case name to its --json file`);
  }
  return rows;
}

/**
 * Runs `scripts/bench/<name>.mjs --json <file> [args]`; resolves with its exit code and, when it
 * exited 0, its rows. Its output is echoed through `log`.
 */
export function runSubBench(name, args, log) {
  const script = path.join(BENCH_DIR, `${name}.mjs`);
  if (!fs.existsSync(script)) return Promise.resolve({ rows: [], code: 'missing' });
  const jsonFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sub-')), 'rows.json');
  const child = spawn(process.execPath, [script, '--json', jsonFile, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  child.stdout.on('data', echo);
  child.stderr.on('data', echo);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      try {
        resolve({ code, rows: code === 0 ? readRows(name, jsonFile) : [] });
      } catch (err) {
        reject(err);
      }
    });
  });
}
