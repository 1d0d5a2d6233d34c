import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type tls from 'node:tls';
import {
  HttpsTransport,
  TransportError,
  UndiciTransport,
  tlsOptions,
  type Transport,
  type TransportRequest,
} from '../src';
import { CERTS, closedPort, httpsServer, send } from './support/https-server';

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

const CA = { ca: fs.readFileSync(path.join(CERTS, 'ca.crt')) };

/** A transport under test and how to close its connections. */
interface Made {
  request: Transport['request'];
  destroy(): Promise<void>;
}

/**
 * Both HTTP/1.1 transports, made from the same TLS options (as client.yml's `tlsOptions` gives
 * them): every behaviour below is proven for each.
 */
const TRANSPORTS: [string, (tls?: tls.ConnectionOptions, connections?: number) => Made][] = [
  [
    'HttpsTransport',
    (options = CA, connections = 256) => {
      const t = new HttpsTransport({
        httpsAgent: new https.Agent({ ...options, keepAlive: true, maxSockets: connections }),
      });
      return { request: (r) => t.request(r), destroy: async () => t.destroy() };
    },
  ],
  [
    'UndiciTransport',
    (options = CA, connections = 256) => {
      const t = new UndiciTransport({ tls: options, connections });
      return { request: (r) => t.request(r), destroy: () => t.destroy() };
    },
  ],
];

const request = (url: URL, extra: Partial<TransportRequest> = {}): TransportRequest => ({
  method: 'GET',
  url,
  headers: {},
  connectTimeoutMs: 1000,
  timeoutMs: 2000,
  maxBodyBytes: 1024,
  ...extra,
});

/**
 * The next turn of the event loop: undici reuses a kept-alive connection one turn after its
 * answer (node:https's agent at once), so a test of reuse makes its next call then.
 */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a TransportError');
    },
    (err: unknown) => err as TransportError,
  );

describe.each(TRANSPORTS)('%s', (_name, make) => {
  const made: Made[] = [];
  const transport = (options?: tls.ConnectionOptions, connections?: number) => {
    const t = make(options, connections);
    made.push(t);
    return t;
  };
  afterEach(async () => {
    await Promise.all(made.splice(0).map((t) => t.destroy()));
  });

  it('an answer: status, headers and body; the connection is kept alive', async () => {
    const s = await server((_n, _req, res) => send(res, 201, { ok: true }));
    const t = transport();
    try {
      const first = await t.request(request(s.url));
      expect(first).toMatchObject({ status: 201, body: '{"ok":true}' });
      expect(first.headers['content-type']).toBe('application/json');
      await nextTurn();
      await t.request(request(s.url));
      expect(s.connections()).toBe(1);
      // Calls made as soon as the one before is answered: at most one more connection.
      for (let i = 0; i < 5; i++) await t.request(request(s.url));
      expect(s.connections()).toBeLessThanOrEqual(2);
    } finally {
      await s.close();
    }
  });

  it('a kept-alive connection the server resets is stale_connection; a new one that resets is network', async () => {
    const s = await server((n, req, res) => (n === 2 ? req.socket.destroy() : send(res, 200, [])));
    const t = transport();
    try {
      await t.request(request(s.url));
      await nextTurn();
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
      await t.destroy();
      await s.close();
    }
    const reset = await server((_n, req) => req.socket.destroy());
    try {
      const err = await failure(transport().request(request(reset.url)));
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
    const t = transport();
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
    const t = transport();
    try {
      for (let i = 0; i < 2; i++) {
        await nextTurn();
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
    const t = transport();
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
    const t = transport();
    try {
      const url = new URL(`http://127.0.0.1:${port}/v1/data`);
      await expect(t.request(request(url))).resolves.toMatchObject({ body: '["plain"]' });
      await expect(t.request(request(url, { freshConnection: true }))).resolves.toMatchObject({
        body: '["plain"]',
      });
      expect(connections).toBe(2);
    } finally {
      await t.destroy();
      plain.closeAllConnections();
      plain.close();
    }
  });

  it("sends the method, path, query and headers; answers headers in Node's shape", async () => {
    const s = await httpsServer((_req, res) => {
      // Raw header lines, repeated ones too, as a server may write them.
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.setHeader('X-Multi', ['one', 'two']);
      res.setHeader('Content-Type', ['application/json', 'text/plain']);
      res.setHeader('Cookie', ['c=3', 'd=4']);
      res.setHeader('X-Latin', 'caf\u00e9');
      res.setHeader('Single-Cookie', 'x');
      res.writeHead(200);
      res.end('{}');
    });
    const t = transport();
    try {
      const url = new URL(`${s.url}/v1/data?x=1&y=two`);
      const answer = await t.request(
        request(url, {
          method: 'POST',
          headers: { authorization: 'Bearer abc', 'X-Traceability-Id': 't-1' },
        }),
      );
      expect(s.seen[0]).toMatchObject({ method: 'POST', url: '/v1/data?x=1&y=two', body: '' });
      expect(s.seen[0].headers).toMatchObject({
        authorization: 'Bearer abc',
        'x-traceability-id': 't-1',
        host: `localhost:${s.port}`,
      });
      expect(answer.headers).toMatchObject({
        'set-cookie': ['a=1', 'b=2'],
        'x-multi': 'one, two',
        'content-type': 'application/json',
        cookie: 'c=3; d=4',
        'x-latin': 'caf\u00e9',
        'single-cookie': 'x',
        'transfer-encoding': 'chunked',
      });
      expect(Object.keys(answer.headers)).toEqual(
        expect.arrayContaining(['date', 'connection', 'keep-alive']),
      );
      const one = await t.request(request(url));
      expect(one.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    } finally {
      await s.close();
    }
  });

  it("an answer's headers read long after it, other answers read on its connection since", async () => {
    // UndiciTransport reads the headers into Node's shape only when asked: what it keeps of
    // them must stay that answer's own.
    const s = await server((n, _req, res) => {
      res.setHeader('X-Seq', String(n));
      res.setHeader('X-Pad', 'p'.repeat(n * 37));
      send(res, 200, { n });
    });
    const t = transport();
    try {
      const answers = [];
      for (let i = 0; i < 20; i++) {
        answers.push(await t.request(request(s.url)));
        await nextTurn();
      }
      expect(s.connections()).toBe(1);
      expect(answers.map((a) => [a.headers['x-seq'], a.headers['x-pad']?.length, a.body])).toEqual(
        answers.map((_a, i) => [String(i + 1), (i + 1) * 37, `{"n":${i + 1}}`]),
      );
    } finally {
      await s.close();
    }
  });

  it('an empty body and a body in many chunks', async () => {
    const big = 'y'.repeat(200_000);
    const s = await server((n, _req, res) => {
      if (n === 1) {
        res.writeHead(204);
        res.end();
      } else send(res, 200, big, 'text/plain');
    });
    const t = transport();
    try {
      await expect(t.request(request(s.url))).resolves.toMatchObject({ status: 204, body: '' });
      await nextTurn();
      const answer = await t.request(request(s.url, { maxBodyBytes: 200_000 }));
      expect(answer.body).toBe(big);
    } finally {
      await s.close();
    }
  });

  it("TLS: an untrusted certificate and a name not in it are network failures with Node's codes", async () => {
    const s = await server((_n, _req, res) => send(res, 200, ['ok']));
    // 127.0.0.2 is a loopback address the dev certificate does not name (it has 127.0.0.1).
    const other = await httpsServer((_req, res) => send(res, 200, ['ok']), {}, '127.0.0.2');
    try {
      const untrusted = await failure(transport({ ca: [] }).request(request(s.url)));
      expect(untrusted.kind).toBe('network');
      expect(untrusted.code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      const misnamed = await failure(transport().request(request(new URL(other.url))));
      expect(misnamed.kind).toBe('network');
      expect(misnamed.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
      // verifyHostname: false (client.yml) checks the chain, not the name.
      const named = transport({ ...CA, checkServerIdentity: () => undefined });
      await expect(named.request(request(new URL(other.url)))).resolves.toMatchObject({
        status: 200,
        body: '["ok"]',
      });
    } finally {
      await s.close();
      await other.close();
    }
  });

  it("two-way TLS: the client certificate of client.yml's key store is presented", async () => {
    const s = await httpsServer((_req, res) => send(res, 200, ['two-way']), {
      requestCert: true,
      rejectUnauthorized: true,
      ca: CA.ca,
    });
    const tls = {
      verifyHostname: true,
      loadDefaultTrustStore: false,
      loadTrustStore: true,
      trustStore: path.join(CERTS, 'ca.crt'),
      loadKeyStore: true,
      keyStore: path.join(CERTS, 'client.pem'),
    };
    try {
      const url = new URL(`${s.url}/v1/data`);
      await expect(transport(tlsOptions(tls)).request(request(url))).resolves.toMatchObject({
        status: 200,
        body: '["two-way"]',
      });
      const refused = await failure(
        transport(tlsOptions({ ...tls, loadKeyStore: false })).request(request(url)),
      );
      expect(refused.kind).toBe('network');
    } finally {
      await s.close();
    }
  });

  it('a call that times out waiting for a connection of the pool is never sent', async () => {
    const paths: string[] = [];
    const s = await server((_n, req, res) => {
      paths.push(req.url ?? '');
      setTimeout(() => send(res, 200, ['late']), 300);
    });
    const t = transport(undefined, 1);
    try {
      // The same connect time-out: the calls share undici's pool (one per connect time-out).
      const first = t.request(request(s.url, { connectTimeoutMs: 90, timeoutMs: 2000 }));
      const queued = await failure(
        t.request(request(new URL('/v1/queued', s.url), { connectTimeoutMs: 90, timeoutMs: 100 })),
      );
      expect(queued.kind).toBe('timeout');
      await expect(first).resolves.toMatchObject({ status: 200 });
      await nextTurn();
      await t.request(request(s.url, { connectTimeoutMs: 90 }));
      expect(paths).toEqual(['/v1/data', '/v1/data']);
    } finally {
      await s.close();
    }
  });
});
