import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';

// Debian's Prometheus for the tests (scripts/test-infra.sh installs the `prometheus` package):
// `promtool check metrics` on an exposition text, and a `prometheus` server of the test's own,
// never the system service: loopback, a free port, its config and data in a temporary folder.

const INSTALL_HINT =
  'run scripts/test-infra.sh (as root), which installs Debian\'s "prometheus" package ' +
  '(prometheus and promtool)';

/** The absolute path of a program on PATH; throws naming the install step when it is missing. */
export function requireProgram(name: 'prometheus' | 'promtool'): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  throw new Error(`${name} is not installed: ${INSTALL_HINT}`);
}

export interface PromtoolResult {
  /** 0: clean; 3: lint notes only; 1: the text could not be parsed. */
  code: number | null;
  output: string;
}

/** `promtool check metrics` with the exposition text on its standard input. */
export function promtoolCheckMetrics(text: string): Promise<PromtoolResult> {
  const child = spawn(requireProgram('promtool'), ['check', 'metrics'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  child.stdin.end(text);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('promtool check metrics: no answer within 10 s'));
    }, 10_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** One sample of an instant vector, as `/api/v1/query` returns it. */
export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** A target of `/api/v1/targets`. */
export interface Target {
  labels: Record<string, string>;
  scrapeUrl: string;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
}

export interface PrometheusServer {
  url: string;
  /** The folder of its config (prometheus.yml) and data (data/). */
  dir: string;
  /** Its log lines so far (logfmt, stderr). */
  log(): string;
  /** An instant query; throws on an API error. */
  query(promql: string): Promise<Sample[]>;
  targets(): Promise<Target[]>;
  /**
   * Polls `query` until `done` holds for its samples, at most `timeoutMs`; returns the last
   * samples either way (the caller asserts on them).
   */
  waitFor(promql: string, done: (s: Sample[]) => boolean, timeoutMs?: number): Promise<Sample[]>;
  stop(): Promise<void>;
}

function getJson<T>(url: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: 5000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const body = JSON.parse(text) as { status: string; data: T; error?: string };
        if (body.status !== 'success') reject(new Error(`${url}: ${body.error ?? text}`));
        else resolve(body.data);
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within 5 s`)));
    req.on('error', reject);
  });
}

/**
 * Starts `prometheus` with the given configuration (an object written as YAML: JSON is YAML)
 * on 127.0.0.1 and a free port, its TSDB in a temporary folder; resolves once `/-/ready`
 * answers 200.
 */
export async function startPrometheus(config: object): Promise<PrometheusServer> {
  const binary = requireProgram('prometheus');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prometheus-e2e-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), JSON.stringify(config, null, 2));
  let log = '';
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let running = true;
  void exited.then(() => (running = false));

  const stop = async () => {
    if (running) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };

  const ready = () =>
    new Promise<boolean>((resolve) => {
      const req = http.get(`${url}/-/ready`, { timeout: 1000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
    });
  const until = Date.now() + 20_000;
  while (!(await ready())) {
    if (!running || Date.now() > until) {
      const text = log;
      await stop();
      throw new Error(`prometheus did not become ready on ${url}:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const query = async (promql: string) =>
    (
      await getJson<{ resultType: string; result: Sample[] }>(
        `${url}/api/v1/query?query=${encodeURIComponent(promql)}`,
      )
    ).result;

  return {
    url,
    dir,
    log: () => log,
    query,
    targets: async () =>
      (await getJson<{ activeTargets: Target[] }>(`${url}/api/v1/targets`)).activeTargets,
    async waitFor(promql, done, timeoutMs = 15_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const samples = await query(promql);
        if (done(samples) || Date.now() > end) return samples;
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    stop,
  };
}
