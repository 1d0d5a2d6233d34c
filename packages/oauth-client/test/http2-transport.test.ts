import fs from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  Downstream,
  Http2Transport,
  HttpsTransport,
  TransportError,
  type TransportRequest,
} from '../src';
import {
  CERTS,
  closedPort,
  httpsServer,
  send,
  trustingAgent,
  type TestServer,
} from './support/https-server';

const ca = fs.readFileSync(path.join(CERTS, 'ca.crt'));
const limits = { timeoutMs: 1000, connectTimeoutMs: 1000, maxBodyBytes: 1024 * 1024 };

/** The HTTP/1.1 transport of origins that do not offer h2. */
const fallback = () => new HttpsTransport({ httpsAgent: trustingAgent() });

/** A GET through `transport` with the limits above, `over` changed. */
const get = (
  transport: Http2Transport,
  url: string,
  headers: Record<string, string> = {},
  over: Partial<TransportRequest> = {},
) => transport.request({ method: 'GET', url: new URL(url), headers, ...limits, ...over });

/** Status and body of an answer. */
const text = async (answer: Promise<{ status: number; body: string }>) => {
  const { status, body } = await answer;
  return { status, text: body };
};

interface H2Server {
  url: string;
  server: http2.Http2SecureServer;
  /** Sessions opened by clients so far. */
  sessions: http2.ServerHttp2Session[];
  /** Requests seen: protocol and headers. */
  seen: { httpVersion: string; headers: http2.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

type Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;

/** A real HTTP/2 server with HTTP/1.1 fallback (ALPN), the dev certificate. */
async function h2Server(handler: Handler): Promise<H2Server> {
  const sessions: http2.ServerHttp2Session[] = [];
  const seen: H2Server['seen'] = [];
  const server = http2.createSecureServer(
    {
      key: fs.readFileSync(path.join(CERTS, 'server.key')),
      cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
      allowHTTP1: true,
    },
    (req, res) => {
      seen.push({ httpVersion: req.httpVersion, headers: req.headers });
      handler(req, res);
    },
  );
  server.on('session', (s: http2.ServerHttp2Session) => sessions.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://localhost:${port}`,
    server,
    sessions,
    seen,
    close: () =>
      new Promise((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const json = (res: http2.Http2ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
};

let pool: Http2Transport;
beforeEach(() => {
  pool = new Http2Transport({ tls: { ca }, fallback: fallback() });
});
afterEach(() => pool.close());

describe('Http2Transport', () => {
  let h2: H2Server;
  let handler: Handler;
  beforeAll(async () => {
    h2 = await h2Server((req, res) => handler(req, res));
  });
  afterAll(() => h2.close());

  it('GETs over HTTP/2 from a server that offers it, the headers sent as given', async () => {
    handler = (_req, res) => json(res, 200, ['API D: Message 1']);
    const before = h2.seen.length;
    const answer = await get(pool, `${h2.url}/v1/data?x=1`, {
      'x-correlation-id': 'c-1',
      authorization: 'Bearer t',
    });
    expect(answer).toMatchObject({ status: 200, body: '["API D: Message 1"]' });
    expect(answer.headers['content-type']).toBe('application/json');
    const seen = h2.seen[before];
    expect(seen.httpVersion).toBe('2.0');
    expect(seen.headers[':path']).toBe('/v1/data?x=1');
    expect(seen.headers['x-correlation-id']).toBe('c-1');
    expect(seen.headers.authorization).toBe('Bearer t');
    expect(pool.protocolOf(new URL(h2.url).origin)).toBe('h2');
  });

  it('multiplexes concurrent calls over one session (one connection)', async () => {
    handler = (_req, res) => setTimeout(() => json(res, 200, ['ok']), 20);
    const sessionsBefore = h2.sessions.length;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => get(pool, `${h2.url}/v1/data`)),
    );
    expect(answers.every((a) => a.status === 200 && a.body === '["ok"]')).toBe(true);
    expect(h2.sessions.length - sessionsBefore).toBe(1);
  });

  it('passes any status and body on as they are: the caller judges them', async () => {
    handler = (_req, res) => json(res, 503, { code: 'ERR20002' });
    await expect(text(get(pool, `${h2.url}/v1/data`))).resolves.toEqual({
      status: 503,
      text: '{"code":"ERR20002"}',
    });
  });

  it('no answer within the time-out is a timeout, and the stream is cancelled', async () => {
    let cancelled: Promise<void> | undefined;
    handler = (req) => {
      cancelled = new Promise((resolve) => req.stream.once('close', () => resolve()));
    };
    const started = Date.now();
    const call = get(pool, `${h2.url}/v1/data`, {}, { timeoutMs: 150 });
    await expect(call).rejects.toMatchObject({ kind: 'timeout' });
    await expect(call).rejects.toBeInstanceOf(TransportError);
    await expect(call).rejects.toThrow('no answer within 150 ms');
    expect(Date.now() - started).toBeLessThan(1000);
    await cancelled;
  });

  it('a body past maxBodyBytes is body_too_large, not buffered whole', async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(64 * 1024, 'x'));
    };
    await expect(get(pool, `${h2.url}/v1/data`, {}, { maxBodyBytes: 1000 })).rejects.toMatchObject({
      kind: 'body_too_large',
    });
  });

  it('a session the server closes (GOAWAY) finishes its streams; the next call opens a new one', async () => {
    const arrived = new Promise<() => void>((resolve) => {
      handler = (_req, res) => resolve(() => json(res, 200, ['late']));
    });
    const target = `${h2.url}/v1/data`;
    const sessionsBefore = h2.sessions.length;
    const inFlight = text(get(pool, target));
    const release = await arrived;
    // The server stops gracefully: GOAWAY, the stream in flight may finish.
    h2.sessions[h2.sessions.length - 1].close();
    release();
    await expect(inFlight).resolves.toEqual({ status: 200, text: '["late"]' });
    handler = (_req, res) => json(res, 200, ['next']);
    await expect(text(get(pool, target))).resolves.toEqual({ status: 200, text: '["next"]' });
    expect(h2.sessions.length - sessionsBefore).toBe(2);
  });

  it('a stream the server refused unprocessed is sent again once, on a new session', async () => {
    let refuse = true;
    handler = (req, res) => {
      if (refuse) {
        refuse = false;
        req.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        return;
      }
      json(res, 200, ['again']);
    };
    await expect(text(get(pool, `${h2.url}/v1/data`))).resolves.toEqual({
      status: 200,
      text: '["again"]',
    });
  });

  it('freshConnection (the retry of a broken connection) opens a new session', async () => {
    handler = (_req, res) => json(res, 200, ['ok']);
    const target = `${h2.url}/v1/data`;
    await get(pool, target);
    const sessionsBefore = h2.sessions.length;
    await get(pool, target);
    expect(h2.sessions.length).toBe(sessionsBefore);
    await expect(text(get(pool, target, {}, { freshConnection: true }))).resolves.toEqual({
      status: 200,
      text: '["ok"]',
    });
    expect(h2.sessions.length - sessionsBefore).toBe(1);
  });

  it('a stream reset otherwise is an error (never sent twice)', async () => {
    let calls = 0;
    handler = (req) => {
      calls++;
      req.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    };
    await expect(get(pool, `${h2.url}/v1/data`)).rejects.toThrow(/NGHTTP2_INTERNAL_ERROR|code 2/);
    expect(calls).toBe(1);
  });
});

describe('Http2Transport with a server that does not offer HTTP/2', () => {
  let h1: TestServer;
  beforeAll(async () => {
    h1 = await httpsServer((_req, res) => send(res, 200, ['h1']));
  });
  afterAll(() => h1.close());

  it('calls over HTTP/1.1 (the fallback), asks again only after recheckMs', async () => {
    let now = 0;
    const timed = new Http2Transport({
      tls: { ca },
      fallback: fallback(),
      recheckMs: 1000,
      now: () => now,
    });
    const target = `${h1.url}/v1/data`;
    const origin = new URL(target).origin;
    const seen = h1.seen.length;
    await expect(text(get(timed, target))).resolves.toEqual({ status: 200, text: '["h1"]' });
    expect(timed.protocolOf(origin)).toBe('http/1.1');
    now = 999;
    await expect(text(get(timed, target))).resolves.toEqual({ status: 200, text: '["h1"]' });
    expect(timed.protocolOf(origin)).toBe('http/1.1');
    now = 1000;
    const again = get(timed, target);
    expect(timed.protocolOf(origin)).toBeUndefined(); // negotiating again
    await expect(text(again)).resolves.toEqual({ status: 200, text: '["h1"]' });
    expect(h1.seen.length - seen).toBe(3);
    timed.close();
  });

  it('the Downstream then calls over HTTP/1.1 with the same answer', async () => {
    const downstream = new Downstream({
      name: 'api-d',
      url: `${h1.url}/v1/data`,
      timeoutMs: 1000,
      transport: pool,
    });
    await expect(downstream.getJson({})).resolves.toEqual({ status: 200, body: ['h1'] });
    expect(h1.seen[h1.seen.length - 1].headers.accept).toBe('application/json');
  });
});

describe('Http2Transport failures', () => {
  it('a refused connection is a network failure; the next call connects again', async () => {
    const port = await closedPort();
    const target = `https://127.0.0.1:${port}/v1/data`;
    const refused = { kind: 'network', code: 'ECONNREFUSED' };
    await expect(get(pool, target)).rejects.toMatchObject(refused);
    expect(pool.protocolOf(new URL(target).origin)).toBeUndefined();
    await expect(get(pool, target)).rejects.toMatchObject(refused);
  });

  it('a certificate the trust store does not vouch for is refused', async () => {
    const server = await h2Server((_req, res) => json(res, 200, []));
    const untrusting = new Http2Transport({ tls: { ca: [] }, fallback: fallback() });
    await expect(get(untrusting, `${server.url}/v1/data`)).rejects.toThrow(/certificate/);
    untrusting.close();
    await server.close();
  });

  it('the Downstream over HTTP/2 maps failures as over HTTP/1.1 (time-out ERR20003)', async () => {
    const server = await h2Server(() => undefined);
    const downstream = new Downstream({
      name: 'api-d',
      url: `${server.url}/v1/data`,
      timeoutMs: 150,
      transport: pool,
    });
    await expect(downstream.getJson({})).rejects.toMatchObject({
      body: {
        code: 'ERR20003',
        description: 'Downstream service api-d did not answer within 150 ms',
      },
    });
    await server.close();
  });
});
