import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { ROOT } from './paths.js';

const SCRIPT = path.join(ROOT, 'scripts', 'influxdb.sh');

export interface Influxd {
  port: number;
  url: string;
  /** Admin credentials (auth is on). */
  user: string;
  password: string;
  /** InfluxQL against `/query`; rows by series, times in epoch milliseconds. */
  query(db: string, q: string): Promise<InfluxSeries[]>;
  /** Stops influxd, keeping its data. */
  pause(): Promise<void>;
  /** Starts it again on the same ports with the same data; resolves once it answers. */
  resume(): Promise<void>;
  /** Stops influxd and removes its data folder. */
  stop(): Promise<void>;
}

export interface InfluxSeries {
  name: string;
  tags?: Record<string, string>;
  columns: string[];
  values: unknown[][];
}

/**
 * A point as one line, `measurement tag=value,... value`: what a test compares the points a
 * reporter makes with (structurally typed: the influx package's IPoint fits).
 */
export function pointLine(point: {
  measurement?: string;
  tags?: Record<string, string>;
  fields?: Record<string, unknown>;
}): string {
  const tags = Object.entries(point.tags ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return `${point.measurement} ${tags} ${String(point.fields?.value)}`;
}

/**
 * A metrics.yml that reports to this InfluxDB into database `db`, with the given lines added
 * (the report interval).
 */
export function metricsYml(influx: Influxd, db: string, extra: string[]): string {
  return (
    [
      'enabled: true',
      'influxdbProtocol: http',
      'influxdbHost: 127.0.0.1',
      `influxdbPort: ${influx.port}`,
      `influxdbName: ${db}`,
      `influxdbUser: ${influx.user}`,
      `influxdbPass: ${influx.password}`,
      ...extra,
    ].join('\n') + '\n'
  );
}

/**
 * Starts Debian's influxd (1.x, `scripts/influxdb.sh install`) on loopback: both the HTTP and
 * the RPC bind-address on free ports, meta/data/wal in a temporary folder, HTTP auth on with
 * one admin user. Never the system service on 8086.
 */
export async function startInfluxd(): Promise<Influxd> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'influxd-e2e-'));
  const port = await freePort();
  const rpcPort = await freePort();
  const config = path.join(dir, 'influxdb.conf');
  // One config text for the script and the tests: scripts/influxdb.sh writes it.
  execFileSync('bash', [SCRIPT, 'config', dir, String(port), String(rpcPort), 'true']);
  const url = `http://127.0.0.1:${port}`;
  const user = 'admin';
  const password = `e2e-${Math.random().toString(36).slice(2)}`;

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stderr = '';
  const kill = async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    child = undefined;
  };
  /** Starts influxd on the same ports and data, and waits until it answers /ping. */
  const launch = async () => {
    const started = spawn('influxd', ['-config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = started;
    let missing = false;
    started.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    exited = new Promise<void>((resolve) => {
      started.once('exit', () => resolve());
      started.once('error', () => {
        missing = true;
        resolve();
      });
    });
    // A loaded machine (the whole suite on two cores) can take seconds to start it.
    const until = Date.now() + 30_000;
    for (;;) {
      if (missing) {
        throw new Error('influxd is not installed: run `bash scripts/influxdb.sh install` first');
      }
      if (started.exitCode !== null) throw new Error(`influxd exited: ${stderr}`);
      const ok = await fetch(`${url}/ping`).then(
        (r) => r.status === 204,
        () => false,
      );
      if (ok) return;
      if (Date.now() > until) {
        await kill();
        throw new Error(`influxd did not answer /ping in time: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async () => {
    await kill();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  await launch();

  const post = async (q: string, params: Record<string, string> = {}, auth = true) => {
    const res = await fetch(`${url}/query?${new URLSearchParams({ ...params, epoch: 'ms' })}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        ...(auth && {
          Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
        }),
      },
      body: new URLSearchParams({ q }).toString(),
    });
    const body = (await res.json()) as {
      error?: string;
      results?: { error?: string; series?: InfluxSeries[] }[];
    };
    const error = body.error ?? body.results?.find((r) => r.error)?.error;
    if (res.status !== 200 || error) throw new Error(`InfluxDB ${res.status}: ${error}`);
    return body.results?.[0]?.series ?? [];
  };
  // With auth on and no user yet, InfluxDB 1.x accepts exactly this statement unauthenticated.
  await post(`CREATE USER "${user}" WITH PASSWORD '${password}' WITH ALL PRIVILEGES`, {}, false);

  return {
    port,
    url,
    user,
    password,
    query: (db, q) => post(q, { db }),
    pause: kill,
    resume: launch,
    stop,
  };
}
