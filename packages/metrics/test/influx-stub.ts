import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the stub answers: `ok` as InfluxDB does; `unauthorized` (401), `bad-request` (400: points
 * InfluxDB refuses, such as points older than the retention policy) and `timeout` (500: the write
 * timed out inside InfluxDB), with InfluxDB 1.x's status and error body; `hold`: no answer until
 * `release()`.
 */
export type StubMode = 'ok' | 'unauthorized' | 'bad-request' | 'timeout' | 'hold';

export interface StubRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization?: string;
  /** The request's `Connection` header (`close`: a connection of its own). */
  connection?: string;
  body: string;
}

/**
 * A tiny stand-in for InfluxDB 1.x's HTTP API (`/query`, `/write`) on a real loopback socket, for
 * the faults a real InfluxDB cannot be made to show on demand: refused credentials, a write that
 * hangs. The end-to-end test runs the real InfluxDB.
 */
export class InfluxStub {
  readonly requests: StubRequest[] = [];
  mode: StubMode = 'ok';
  /** Modes for the next writes, one each, before `mode` applies again. */
  readonly nextWrites: StubMode[] = [];
  private readonly held: (() => void)[] = [];
  private readonly waiters: { count: number; path?: string; resolve: () => void }[] = [];
  private server: http.Server | undefined;
  port = 0;

  async start(port = 0): Promise<number> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://stub');
        this.requests.push({
          method: req.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          authorization: req.headers.authorization,
          connection: req.headers.connection,
          body,
        });
        for (const w of this.waiters.filter((w) => this.count(w.path) >= w.count)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve();
        }
        const mode = (url.pathname === '/write' && this.nextWrites.shift()) || this.mode;
        const answer = (now: StubMode = mode) => {
          if (now === 'unauthorized') {
            res.writeHead(401, { 'Content-Type': 'application/json' });
            res.end('{"error":"authorization failed"}');
          } else if (now === 'bad-request') {
            res.writeHead(400, { 'Content-Type': 'application/json' });
            res.end('{"error":"partial write: points beyond retention policy dropped=1"}');
          } else if (now === 'timeout') {
            res.writeHead(500, { 'Content-Type': 'application/json' });
            res.end('{"error":"timeout"}');
          } else if (url.pathname === '/write') {
            res.writeHead(204).end();
          } else {
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end('{"results":[{"statement_id":0}]}');
          }
        };
        if (mode === 'hold') this.held.push(() => answer(this.mode));
        else answer();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this.port;
  }

  /** Resolves once `count` requests (to `path`, when given) have arrived: a signal, not a sleep. */
  received(count: number, path?: string): Promise<void> {
    if (this.count(path) >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, path, resolve }));
  }

  private count(path: string | undefined): number {
    return path ? this.requests.filter((r) => r.path === path).length : this.requests.length;
  }

  /** Answers every held request with the current mode. */
  release(): void {
    for (const answer of this.held.splice(0)) answer();
  }

  writes(): string[] {
    return this.requests.filter((r) => r.path === '/write').map((r) => r.body);
  }

  /** Every line of every write, in the order received. */
  lines(): string[] {
    return this.writes().flatMap((body) => body.split('\n'));
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
