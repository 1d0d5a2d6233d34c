// A real InfluxDB for the shipped-configuration cases: Debian's influxd, started by
// scripts/influxdb.sh on loopback ports of its own with a data folder of its own, stopped by the
// runner (never the system service, never port 8086).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './paths.mjs';
import { freePort } from './processes.mjs';

const SCRIPT = path.join(ROOT, 'scripts', 'influxdb.sh');

const run = (args) =>
  new Promise((resolve, reject) =>
    execFile('bash', [SCRIPT, ...args], (err, stdout, stderr) =>
      err ? reject(new Error(`${stderr || stdout || err.message}`.trim())) : resolve(stdout),
    ),
  );

/** Starts influxd; resolves with {host, port, stop()}. Fails with the install command when missing. */
export async function startInfluxd() {
  const missing = await new Promise((resolve) =>
    execFile('bash', ['-c', 'command -v influxd'], (err) => resolve(Boolean(err))),
  );
  if (missing) {
    throw new Error('influxd is not installed: run `bash scripts/influxdb.sh install` first');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-influxd-'));
  const port = await freePort();
  const rpcPort = await freePort();
  await run(['start', dir, String(port), String(rpcPort)]);
  return {
    host: '127.0.0.1',
    port,
    /** Points written so far to database `metrics` (0 when none). */
    async points() {
      const res = await fetch(
        `http://127.0.0.1:${port}/query?db=metrics&q=${encodeURIComponent('SHOW SERIES')}`,
      ).catch(() => undefined);
      const body = res && (await res.json().catch(() => undefined));
      return body?.results?.[0]?.series?.[0]?.values?.length ?? 0;
    },
    async stop() {
      await run(['stop', dir]).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
