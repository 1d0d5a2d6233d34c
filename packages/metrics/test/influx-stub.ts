import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type StubMode = 'ok' | 'unauthorized' | 'hold';

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
        const answer = () => {
          if (this.mode === 'unauthorized') {
            res.writeHead(401, { 'Content-Type': 'application/json' });
            res.end('{"error":"authorization failed"}');
          } else if (url.pathname === '/write') {
            res.writeHead(204).end();
          } else {
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end('{"results":[{"statement_id":0}]}');
          }
        };
        if (this.mode === 'hold') this.held.push(answer);
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

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
