import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { HttpsTransport, TransportError, type TransportRequest } from '../src';
import { CERTS, closedPort, send } from './support/https-server';

const TLS = {
  key: fs.readFileSync(path.join(CERTS, 'server.key')),
  cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
};

/**
 * A real HTTPS server that counts connections and requests per connection; `onRequest` decides
 * what the n-th request of a connection gets.
 */
async function server(
  onRequest: (n: number, req: http.IncomingMessage, res: http.ServerResponse) => void,
) {
  const perSocket = new WeakMap<object, number>();
  let connections = 0;
  const s = https.createServer(TLS, (req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    onRequest(n, req, res);
  });
  s.on('secureConnection', () => (connections += 1));
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  return {
    url: new URL(`https://localhost:${port}/v1/data`),
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        s.closeAllConnections();
        s.close(() => resolve());
      }),
  };
}

const agent = () =>
  new https.Agent({ ca: fs.readFileSync(path.join(CERTS, 'ca.crt')), keepAlive: true });

const request = (url: URL, extra: Partial<TransportRequest> = {}): TransportRequest => ({
  method: 'GET',
  url,
  headers: {},
  connectTimeoutMs: 1000,
  timeoutMs: 2000,
  maxBodyBytes: 1024,
  ...extra,
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a TransportError');
    },
    (err: unknown) => err as TransportError,
  );

describe('HttpsTransport', () => {
  it('an answer: status, headers and body; the connection is kept alive', async () => {
    const s = await server((_n, _req, res) => send(res, 201, { ok: true }));
    const t = new HttpsTransport({ httpsAgent: agent() });
    try {
      const first = await t.request(request(s.url));
      expect(first).toMatchObject({ status: 201, body: '{"ok":true}' });
      expect(first.headers['content-type']).toBe('application/json');
      await t.request(request(s.url));
      expect(s.connections()).toBe(1);
    } finally {
      await s.close();
    }
  });

  it('a kept-alive connection the server resets is stale_connection; a new one that resets is network', async () => {
    const s = await server((n, req, res) => (n === 2 ? req.socket.destroy() : send(res, 200, [])));
    const t = new HttpsTransport({ httpsAgent: agent() });
    try {
      await t.request(request(s.url));
      const stale = await failure(t.request(request(s.url)));
      expect(stale).toBeInstanceOf(TransportError);
      expect(stale.kind).toBe('stale_connection');
      expect(stale.code).toBe('ECONNRESET');
      // A fresh connection is a new one, outside the keep-alive pool.
      await expect(t.request(request(s.url, { freshConnection: true }))).resolves.toMatchObject({
        status: 200,
      });
      expect(s.connections()).toBe(2);
    } finally {
      t.destroy();
      await s.close();
    }
    const reset = await server((_n, req) => req.socket.destroy());
    try {
      const err = await failure(
        new HttpsTransport({ httpsAgent: agent() }).request(request(reset.url)),
      );
      expect(err.kind).toBe('network');
    } finally {
      await reset.close();
    }
  });

  it('connect time-out: a peer that accepts TCP but never completes TLS fails at connectTimeoutMs', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket)); // never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const url = new URL(`https://localhost:${port}/v1/data`);
    const t = new HttpsTransport({ httpsAgent: agent() });
    try {
      const started = Date.now();
      const err = await failure(
        t.request(request(url, { connectTimeoutMs: 150, timeoutMs: 3000 })),
      );
      const took = Date.now() - started;
      expect(err.kind).toBe('connect_timeout');
      expect(err.message).toBe('no connection within 150 ms');
      expect(took).toBeGreaterThanOrEqual(140);
      expect(took).toBeLessThan(1500);
      // A connect time-out not shorter than the whole time-out is the whole time-out.
      const whole = await failure(
        t.request(request(url, { connectTimeoutMs: 500, timeoutMs: 200 })),
      );
      expect(whole.kind).toBe('timeout');
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it('an answer slower than connectTimeoutMs is not a connect time-out, on a new or a kept-alive connection', async () => {
    const s = await server((_n, _req, res) => setTimeout(() => send(res, 200, ['slow']), 250));
    const t = new HttpsTransport({ httpsAgent: agent() });
    try {
      for (let i = 0; i < 2; i++) {
        await expect(
          t.request(request(s.url, { connectTimeoutMs: 100, timeoutMs: 2000 })),
        ).resolves.toMatchObject({ status: 200, body: '["slow"]' });
      }
      expect(s.connections()).toBe(1);
    } finally {
      await s.close();
    }
  });

  it('request time-out, refused connection and a body over the limit', async () => {
    let requests = 0;
    const s = await server((_n, _req, res) => {
      if (++requests === 1) send(res, 200, 'x'.repeat(5000), 'text/plain');
      // later requests hang
    });
    const t = new HttpsTransport({ httpsAgent: agent() });
    try {
      const big = await failure(t.request(request(s.url)));
      expect(big.kind).toBe('body_too_large');
      expect(big.message).toBe('a body larger than 1024 bytes');
      const slow = await failure(t.request(request(s.url, { timeoutMs: 150 })));
      expect(slow.kind).toBe('timeout');
      expect(slow.message).toBe('no answer within 150 ms');
    } finally {
      await s.close();
    }
    const refused = await failure(
      t.request(request(new URL(`https://127.0.0.1:${await closedPort()}/`))),
    );
    expect(refused.kind).toBe('network');
    expect(refused.code).toBe('ECONNREFUSED');
  });

  it('speaks plain HTTP to an http:// URL, fresh connections too', async () => {
    let connections = 0;
    const plain = http.createServer((_req, res) => send(res, 200, ['plain']));
    plain.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const { port } = plain.address() as AddressInfo;
    const t = new HttpsTransport({ httpsAgent: agent() });
    try {
      const url = new URL(`http://127.0.0.1:${port}/v1/data`);
      await expect(t.request(request(url))).resolves.toMatchObject({ body: '["plain"]' });
      await expect(t.request(request(url, { freshConnection: true }))).resolves.toMatchObject({
        body: '["plain"]',
      });
      expect(connections).toBe(2);
    } finally {
      t.destroy();
      plain.closeAllConnections();
      plain.close();
    }
  });
});
