import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { CERTS, freePort } from '@chain/testkit';
import { TransportError, type TransportRequest } from '../src/transport.js';
import { failureOf } from '../src/http-client.js';
import {
  closeClients,
  httpsServer,
  send,
  testClient,
} from '../../oauth-client/test/support/https-server.js';

const TLS = {
  key: fs.readFileSync(path.join(CERTS, 'server.key')),
  cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
};
const CA = fs.readFileSync(path.join(CERTS, 'ca.crt'));

afterEach(closeClients);

/**
 * A real HTTPS server that counts connections and requests per connection; `onRequest` decides
 * what the n-th request of a connection gets.
 */
async function server(
  onRequest: (n: number, req: http.IncomingMessage, res: http.ServerResponse) => void,
  options: https.ServerOptions = {},
) {
  const perSocket = new WeakMap<object, number>();
  let connections = 0;
  const s = https.createServer({ ...TLS, ...options }, (req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    onRequest(n, req, res);
  });
  s.on('secureConnection', () => (connections += 1));
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  return {
    url: new URL(`https://localhost:${port}/v1/data`),
    port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        s.closeAllConnections();
        s.close(() => resolve());
      }),
  };
}

const request = (url: URL, extra: Partial<TransportRequest> = {}): TransportRequest => ({
  method: 'GET',
  url,
  headers: {},
  timeoutMs: 2000,
  maxBodyBytes: 1024,
  ...extra,
});

/**
 * The next turn of the event loop: undici reuses a kept-alive connection one turn after its
 * answer, so a test of reuse makes its next call then.
 */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a TransportError');
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(TransportError);
      return err as TransportError;
    },
  );

describe('HttpClient over HTTP/1.1', () => {
  it('an answer: status, headers and body; the connection is kept alive', async () => {
    const s = await server((_n, _req, res) => send(res, 201, { ok: true }));
    const client = testClient();
    try {
      const first = await client.request(request(s.url));
      expect(first).toMatchObject({ status: 201, body: '{"ok":true}' });
      expect(first.headers['content-type']).toBe('application/json');
      await nextTurn();
      await client.request(request(s.url));
      expect(s.connections()).toBe(1);
      // Calls made as soon as the one before is answered: at most one more connection.
      for (let i = 0; i < 5; i++) await client.request(request(s.url));
      expect(s.connections()).toBeLessThanOrEqual(2);
    } finally {
      await s.close();
    }
  });

  it('a kept-alive connection the server resets is stale_connection; a new one that resets is network', async () => {
    const s = await server((n, req, res) => (n === 2 ? req.socket.destroy() : send(res, 200, [])));
    const client = testClient();
    try {
      await client.request(request(s.url));
      await nextTurn();
      const stale = await failure(client.request(request(s.url)));
      expect(stale).toMatchObject({
        code: 'stale_connection',
        cause: { code: 'ECONNRESET' },
        message: 'kept-alive connection reset (ECONNRESET)',
      });
      // A fresh connection is a new one, outside the keep-alive pool.
      await expect(
        client.request(request(s.url, { freshConnection: true })),
      ).resolves.toMatchObject({ status: 200 });
      expect(s.connections()).toBe(2);
    } finally {
      await s.close();
    }
    const reset = await server((_n, req) => req.socket.destroy());
    try {
      const err = await failure(testClient().request(request(reset.url)));
      expect(err).toMatchObject({
        code: 'network',
        cause: { code: 'ECONNRESET' },
        message: 'socket hang up',
      });
    } finally {
      await reset.close();
    }
  });

  it('connect time-out: a peer that accepts TCP but never completes TLS fails at request.connectTimeout', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket)); // never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const url = new URL(`https://localhost:${port}/v1/data`);
    try {
      const started = Date.now();
      const err = await failure(
        testClient({ connectTimeout: 150 }).request(request(url, { timeoutMs: 3000 })),
      );
      const took = Date.now() - started;
      expect(err).toMatchObject({
        code: 'connect_timeout',
        cause: { code: 'UND_ERR_CONNECT_TIMEOUT' },
        message: 'no connection within 150 ms',
      });
      expect(took).toBeGreaterThanOrEqual(140);
      expect(took).toBeLessThan(1500);
      // A connect time-out not shorter than the whole time-out is the whole time-out.
      const whole = await failure(
        testClient({ connectTimeout: 500 }).request(request(url, { timeoutMs: 200 })),
      );
      expect(whole).toMatchObject({ code: 'timeout', message: 'no answer within 200 ms' });
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it('an answer slower than the connect time-out is not a connect time-out, on a new or a kept-alive connection', async () => {
    const s = await server((_n, _req, res) => setTimeout(() => send(res, 200, ['slow']), 250));
    const client = testClient({ connectTimeout: 100 });
    try {
      for (let i = 0; i < 2; i++) {
        await nextTurn();
        await expect(client.request(request(s.url))).resolves.toMatchObject({
          status: 200,
          body: '["slow"]',
        });
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
    const client = testClient();
    try {
      const big = await failure(client.request(request(s.url)));
      expect(big).toMatchObject({
        code: 'body_too_large',
        message: 'a body larger than 1024 bytes',
      });
      const slow = await failure(client.request(request(s.url, { timeoutMs: 150 })));
      expect(slow).toMatchObject({ code: 'timeout', message: 'no answer within 150 ms' });
    } finally {
      await s.close();
    }
    const refused = await failure(
      client.request(request(new URL(`https://127.0.0.1:${await freePort()}/`))),
    );
    expect(refused).toMatchObject({ code: 'network', cause: { code: 'ECONNREFUSED' } });
  });

  it("a DNS failure is network with Node's code; a close after the answer began is network (no socket: the tests' network is loopback only)", () => {
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND api-x'), { code: 'ENOTFOUND' });
    const state = { answered: false, reused: false, connectTimeoutMs: 1 };
    expect(failureOf(dns, state)).toMatchObject({
      code: 'network',
      message: 'getaddrinfo ENOTFOUND api-x',
      cause: dns,
    });
    // Even on a kept-alive connection: only a reset or a close is a stale connection.
    expect(failureOf(dns, { ...state, reused: true }).code).toBe('network');
    // A connection closed once the answer had begun is no stale one: undici's own error, as it is.
    const closed = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    expect(failureOf(closed, { ...state, reused: true, answered: true })).toMatchObject({
      code: 'network',
      cause: closed,
    });
  });

  it('speaks plain HTTP to an http:// URL, fresh connections too', async () => {
    let connections = 0;
    const plain = http.createServer((_req, res) => send(res, 200, ['plain']));
    plain.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const { port } = plain.address() as AddressInfo;
    const client = testClient();
    try {
      const url = new URL(`http://127.0.0.1:${port}/v1/data`);
      await expect(client.request(request(url))).resolves.toMatchObject({ body: '["plain"]' });
      await expect(client.request(request(url, { freshConnection: true }))).resolves.toMatchObject({
        body: '["plain"]',
      });
      expect(connections).toBe(2);
    } finally {
      await closeClients();
      plain.closeAllConnections();
      plain.close();
    }
  });

  it("sends the method, path, query, headers and body; answers headers in Node's shape", async () => {
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
    const client = testClient();
    try {
      const url = new URL(`${s.url}/v1/data?x=1&y=two`);
      const answer = await client.request(
        request(url, {
          method: 'POST',
          headers: { authorization: 'Bearer abc', 'X-Traceability-Id': 't-1' },
          body: 'grant_type=client_credentials',
        }),
      );
      expect(s.seen[0]).toMatchObject({
        method: 'POST',
        url: '/v1/data?x=1&y=two',
        body: 'grant_type=client_credentials',
      });
      expect(s.seen[0].headers).toMatchObject({
        authorization: 'Bearer abc',
        'x-traceability-id': 't-1',
        host: `localhost:${s.port}`,
        'content-length': '29',
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
      const one = await client.request(request(url));
      expect(one.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    } finally {
      await s.close();
    }
  });

  it("an answer's headers read long after it, other answers read on its connection since", async () => {
    // The headers are read into Node's shape only when asked: what the client keeps of them
    // must stay that answer's own.
    const s = await server((n, _req, res) => {
      res.setHeader('X-Seq', String(n));
      res.setHeader('X-Pad', 'p'.repeat(n * 37));
      send(res, 200, { n });
    });
    const client = testClient();
    try {
      const answers = [];
      for (let i = 0; i < 20; i++) {
        answers.push(await client.request(request(s.url)));
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
    const client = testClient();
    try {
      await expect(client.request(request(s.url))).resolves.toMatchObject({
        status: 204,
        body: '',
      });
      await nextTurn();
      const answer = await client.request(request(s.url, { maxBodyBytes: 200_000 }));
      expect(answer.body).toBe(big);
    } finally {
      await s.close();
    }
  });

  it('a call that times out waiting for its connection is never sent', async () => {
    const paths: string[] = [];
    const s = await server((_n, req, res) => {
      paths.push(req.url ?? '');
      send(res, 200, ['ok']);
    });
    // A hop in front of the server that lets the TLS handshake start only after 300 ms.
    const slow = net.createServer((inbound) => {
      setTimeout(() => {
        const outbound = net.connect(s.port, '127.0.0.1');
        inbound.pipe(outbound).pipe(inbound);
        inbound.on('error', () => outbound.destroy());
        outbound.on('error', () => inbound.destroy());
      }, 300);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const { port } = slow.address() as AddressInfo;
    const client = testClient({ connectTimeout: 2000 });
    try {
      const url = new URL(`https://localhost:${port}/v1/queued`);
      const queued = await failure(client.request(request(url, { timeoutMs: 100 })));
      expect(queued.code).toBe('timeout');
      // The connection is made after all; the next call goes on it, the timed-out one never did.
      await expect(
        client.request(request(new URL(`https://localhost:${port}/v1/data`))),
      ).resolves.toMatchObject({ status: 200 });
      expect(paths).toEqual(['/v1/data']);
    } finally {
      await closeClients();
      slow.close();
      await s.close();
    }
  });
});

describe("HttpClient TLS: client.yml's tls keys", () => {
  const ok = { status: 200, body: '["ok"]' };

  it('trust store: the dev CA is trusted; another PEM, or the system CAs alone, are not', async () => {
    const s = await server((_n, _req, res) => send(res, 200, ['ok']));
    try {
      await expect(testClient().request(request(s.url))).resolves.toMatchObject(ok);
      const other = testClient({ tls: { trustStore: path.join(CERTS, 'primary.crt') } });
      expect(await failure(other.request(request(s.url)))).toMatchObject({
        code: 'network',
        cause: { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
      });
      const system = testClient({ tls: { loadTrustStore: false } });
      expect(await failure(system.request(request(s.url)))).toMatchObject({
        code: 'network',
        cause: { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
      });
      // loadDefaultTrustStore: the system CAs and the trust store, both.
      const both = testClient({ tls: { loadDefaultTrustStore: true } });
      await expect(both.request(request(s.url))).resolves.toMatchObject(ok);
    } finally {
      await s.close();
    }
  });

  it('verifyHostname: a name not in the certificate is refused; false checks the chain, not the name', async () => {
    // 127.0.0.2 is a loopback address the dev certificate does not name (it has 127.0.0.1).
    const other = await httpsServer((_req, res) => send(res, 200, ['ok']), {}, '127.0.0.2');
    const url = new URL(`${other.url}/v1/data`);
    try {
      expect(await failure(testClient().request(request(url)))).toMatchObject({
        code: 'network',
        cause: { code: 'ERR_TLS_CERT_ALTNAME_INVALID' },
      });
      const unnamed = testClient({ tls: { verifyHostname: false } });
      await expect(unnamed.request(request(url))).resolves.toMatchObject(ok);
      // Still the chain: an untrusted certificate is refused without the name check too.
      const untrusted = testClient({
        tls: { verifyHostname: false, trustStore: path.join(CERTS, 'primary.crt') },
      });
      expect(
        ((await failure(untrusted.request(request(url)))).cause as NodeJS.ErrnoException).code,
      ).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    } finally {
      await other.close();
    }
  });

  it('two-way TLS: the key store is presented to a server that requires a client certificate', async () => {
    const s = await server(
      (_n, req, res) => {
        const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
        send(res, 200, [peer.subject?.CN ?? 'none']);
      },
      { requestCert: true, rejectUnauthorized: true, ca: CA },
    );
    try {
      const keyStore = path.join(CERTS, 'client.pem');
      const answer = await testClient({ tls: { loadKeyStore: true, keyStore } }).request(
        request(s.url),
      );
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual([expect.any(String)]);
      expect(answer.body).not.toBe('["none"]');
      // The key store named but switched off: no certificate, the server refuses the handshake.
      const without = testClient({ tls: { loadKeyStore: false, keyStore } });
      expect((await failure(without.request(request(s.url)))).code).toBe('network');
    } finally {
      await s.close();
    }
  });

  it('tlsVersion: the lowest version spoken', async () => {
    const s = await server((_n, _req, res) => send(res, 200, ['ok']), { maxVersion: 'TLSv1.2' });
    try {
      await expect(
        testClient({ tls: { tlsVersion: 'TLSv1.2' } }).request(request(s.url)),
      ).resolves.toMatchObject(ok);
      const err = await failure(
        testClient({ tls: { tlsVersion: 'TLSv1.3' } }).request(request(s.url)),
      );
      expect(err.code).toBe('network');
      expect((err.cause as NodeJS.ErrnoException).code).toMatch(/^ERR_SSL_/);
    } finally {
      await s.close();
    }
  });
});

interface H2Server {
  url: URL;
  /** Sessions opened by clients so far. */
  sessions: http2.ServerHttp2Session[];
  /** Their TLS sockets, to break one as a network would. */
  sockets: net.Socket[];
  /** Requests seen: protocol, method, path and headers. */
  seen: { httpVersion: string; method: string; headers: http2.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

type H2Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;

/** A real HTTP/2 server with HTTP/1.1 fallback (ALPN), the dev certificate. */
async function h2Server(handler: H2Handler): Promise<H2Server> {
  const sessions: http2.ServerHttp2Session[] = [];
  const sockets: net.Socket[] = [];
  const seen: H2Server['seen'] = [];
  const s = http2.createSecureServer({ ...TLS, allowHTTP1: true }, (req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ httpVersion: req.httpVersion, method: req.method, headers: req.headers, body });
      handler(req, res);
    });
  });
  s.on('session', (session: http2.ServerHttp2Session) => sessions.push(session));
  s.on('secureConnection', (socket: net.Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  return {
    url: new URL(`https://localhost:${port}/v1/data`),
    sessions,
    sockets,
    seen,
    close: () =>
      new Promise((resolve) => {
        for (const session of sessions) session.destroy();
        for (const socket of sockets) socket.destroy();
        s.close(() => resolve());
      }),
  };
}

const json = (res: http2.Http2ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('HttpClient over HTTP/2 (client.yml request.enableHttp2)', () => {
  let h2: H2Server;
  let handler: H2Handler;
  beforeAll(async () => {
    h2 = await h2Server((req, res) => handler(req, res));
  });
  afterAll(() => h2.close());
  const h2Client = () => testClient({ enableHttp2: true });

  it('speaks HTTP/2 to a server that offers it (ALPN h2), headers and body as given', async () => {
    handler = (_req, res) => json(res, 200, ['API D: Message 1']);
    const before = h2.seen.length;
    const answer = await h2Client().request(
      request(new URL('/v1/data?x=1', h2.url), {
        headers: { 'x-correlation-id': 'c-1', authorization: 'Bearer t' },
      }),
    );
    expect(answer).toMatchObject({ status: 200, body: '["API D: Message 1"]' });
    expect(answer.headers['content-type']).toBe('application/json');
    expect(h2.seen[before]).toMatchObject({
      httpVersion: '2.0',
      method: 'GET',
      headers: { ':path': '/v1/data?x=1', 'x-correlation-id': 'c-1', authorization: 'Bearer t' },
    });
    // A token request's form goes over HTTP/2 as well.
    await h2Client().request(request(h2.url, { method: 'POST', body: 'a=b' }));
    expect(h2.seen[before + 1]).toMatchObject({ httpVersion: '2.0', method: 'POST', body: 'a=b' });
  });

  it('once a session is up, concurrent calls share it (one connection)', async () => {
    handler = (_req, res) => setTimeout(() => json(res, 200, ['ok']), 20);
    const client = h2Client();
    await client.request(request(h2.url));
    const sessions = h2.sessions.length;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => client.request(request(h2.url))),
    );
    expect(answers.every((a) => a.status === 200 && a.body === '["ok"]')).toBe(true);
    expect(h2.sessions.length).toBe(sessions);
  });

  it('passes any status and body on as they are: the caller judges them', async () => {
    handler = (_req, res) => json(res, 503, { code: 'ERR20002' });
    await expect(h2Client().request(request(h2.url))).resolves.toMatchObject({
      status: 503,
      body: '{"code":"ERR20002"}',
    });
  });

  it('no answer within the time-out is a timeout, and the stream is cancelled', async () => {
    let cancelled: Promise<void> | undefined;
    handler = (req) => {
      cancelled = new Promise((resolve) => req.stream.once('close', () => resolve()));
    };
    const started = Date.now();
    const err = await failure(h2Client().request(request(h2.url, { timeoutMs: 150 })));
    expect(err).toMatchObject({ code: 'timeout', message: 'no answer within 150 ms' });
    expect(Date.now() - started).toBeLessThan(1000);
    await cancelled;
  });

  it('a body past maxBodyBytes is body_too_large, not buffered whole', async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(64 * 1024, 'x'));
    };
    expect(await failure(h2Client().request(request(h2.url)))).toMatchObject({
      code: 'body_too_large',
    });
  });

  it('a session the server closes (GOAWAY): a call in flight on it is answered there, the next call opens a new one', async () => {
    // RFC 9113 section 6.8: the streams a GOAWAY's last stream id covers still complete.
    const client = h2Client();
    handler = (_req, res) => json(res, 200, ['warm']);
    await client.request(request(h2.url));
    const arrived = new Promise<() => void>((resolve) => {
      handler = (_req, res) => resolve(() => json(res, 200, ['late']));
    });
    const sessions = h2.sessions.length;
    const inFlight = client.request(request(h2.url));
    const release = await arrived;
    // The server stops gracefully: GOAWAY first, the answer after it.
    h2.sessions[h2.sessions.length - 1].close();
    release();
    await expect(inFlight).resolves.toMatchObject({ status: 200, body: '["late"]' });
    handler = (_req, res) => json(res, 200, ['next']);
    await expect(client.request(request(h2.url))).resolves.toMatchObject({ body: '["next"]' });
    expect(h2.sessions.length - sessions).toBe(1);
  });

  it('a stream the server refused unprocessed (REFUSED_STREAM) is sent again once', async () => {
    let refusals = 1;
    handler = (req, res) => {
      if (refusals-- > 0) req.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else json(res, 200, ['again']);
    };
    const client = h2Client();
    const before = h2.seen.length;
    await expect(
      client.request(request(h2.url, { method: 'POST', body: 'x' })),
    ).resolves.toMatchObject({ status: 200, body: '["again"]' });
    expect(h2.seen.length - before).toBe(2);
    // Refused twice: the second refusal is the answer.
    refusals = 2;
    expect(await failure(client.request(request(h2.url)))).toMatchObject({
      code: 'network',
      cause: { code: 'ERR_HTTP2_STREAM_ERROR' },
      message: 'Stream closed with error code NGHTTP2_REFUSED_STREAM',
    });
  });

  it('a stream reset otherwise is network, never sent twice', async () => {
    let calls = 0;
    handler = (req) => {
      calls++;
      req.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    };
    expect(await failure(h2Client().request(request(h2.url)))).toMatchObject({
      code: 'network',
      message: 'Stream closed with error code NGHTTP2_INTERNAL_ERROR',
    });
    expect(calls).toBe(1);
  });

  it('a kept-alive session broken before the answer is stale_connection; a new one is network', async () => {
    const client = h2Client();
    handler = (_req, res) => json(res, 200, ['warm']);
    await client.request(request(h2.url));
    handler = () => h2.sockets[h2.sockets.length - 1].destroy();
    expect(await failure(client.request(request(h2.url)))).toMatchObject({
      code: 'stale_connection',
      cause: { code: 'ECONNRESET' },
    });
    expect(await failure(client.request(request(h2.url)))).toMatchObject({
      code: 'network',
      cause: { code: 'ECONNRESET' },
    });
    handler = (_req, res) => json(res, 200, ['fresh']);
    await expect(client.request(request(h2.url, { freshConnection: true }))).resolves.toMatchObject(
      { body: '["fresh"]' },
    );
  });

  it('a server that offers only http/1.1 is called over HTTP/1.1 by the same client', async () => {
    const h1 = await server((_n, req, res) => send(res, 200, [req.httpVersion]));
    try {
      const client = h2Client();
      await expect(client.request(request(h1.url))).resolves.toMatchObject({ body: '["1.1"]' });
      await nextTurn();
      await expect(client.request(request(h1.url))).resolves.toMatchObject({ body: '["1.1"]' });
      expect(h1.connections()).toBe(1);
    } finally {
      await h1.close();
    }
  });

  it('an untrusted certificate is refused over HTTP/2 too', async () => {
    const untrusting = testClient({
      enableHttp2: true,
      tls: { trustStore: path.join(CERTS, 'primary.crt') },
    });
    expect(await failure(untrusting.request(request(h2.url)))).toMatchObject({
      code: 'network',
      cause: { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
    });
  });
});
