import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { StatusError } from '@chain/errors';
import { CERTS, freePort } from '@chain/testkit';
import { Downstream, type DownstreamEvents, type Transport } from '../src/index.js';
import { TransportError, type TransportRequest, type TransportResponse } from '../src/transport.js';
import {
  closeClients,
  httpsServer,
  send,
  testClient,
  type TestServer,
} from '../../oauth-client/test/support/https-server.js';

let server: TestServer;
let answer: (res: http.ServerResponse) => void;
beforeAll(async () => {
  server = await httpsServer((_req, res) => answer(res));
});
afterAll(() => server.close());
afterEach(closeClients);

const downstream = (url = `${server.url}/v1/data`, timeoutMs = 1000) =>
  new Downstream({ name: 'api-d', url, timeoutMs, transport: testClient() });

describe('Downstream', () => {
  it('a 2xx JSON answer is returned, the headers sent as given', async () => {
    answer = (res) => send(res, 200, ['API D: Message 1']);
    await expect(
      downstream().getJson({ 'X-Correlation-Id': 'c-1', Authorization: 'Bearer t' }),
    ).resolves.toEqual({ status: 200, body: ['API D: Message 1'] });
    const last = server.seen[server.seen.length - 1];
    expect(last.headers['x-correlation-id']).toBe('c-1');
    expect(last.headers.authorization).toBe('Bearer t');
    expect(last.headers.accept).toBe('application/json');
  });

  it('a refused connection is ERR20002', async () => {
    const url = `https://127.0.0.1:${await freePort()}/v1/data`;
    await expect(downstream(url).getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 502,
        code: 'ERR20002',
        message: 'DOWNSTREAM_UNAVAILABLE',
        description: 'Downstream service api-d could not be reached',
      },
    });
  });

  it('no answer within the time-out is ERR20003', async () => {
    answer = () => undefined;
    const url = `${server.url}/v1/data`;
    await expect(downstream(url, 150).getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 504,
        code: 'ERR20003',
        message: 'DOWNSTREAM_TIMEOUT',
        description: 'Downstream service api-d did not answer within 150 ms',
      },
    });
  });

  it('a non-2xx answer is ERR20004 naming its status, and its code only when it is ours', async () => {
    answer = (res) => send(res, 401, { code: 'ERR10000', description: 'x' });
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 502,
        code: 'ERR20004',
        description: 'Downstream service api-d answered HTTP 401 ERR10000',
      },
    });
    answer = (res) => send(res, 500, 'oops', 'text/plain');
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: { code: 'ERR20004', description: 'Downstream service api-d answered HTTP 500' },
    });
    answer = (res) => send(res, 400, { code: '<script>alert(1)</script>'.repeat(1000) });
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: { code: 'ERR20004', description: 'Downstream service api-d answered HTTP 400' },
    });
  });

  it('echoes nothing of a downstream body: 20 KB of markup and a stack in, our words out', async () => {
    const hostile = `<html>${'x'.repeat(20_000)}</html>\n    at Object.<anonymous> (/srv/app.js:1:1)`;
    const url = `${server.url}/v1/data`;
    for (const body of [
      { code: 'ERR20002', description: hostile },
      { code: 'ERR20002', description: `Downstream service ${url} could not be reached` },
      { code: hostile, description: hostile },
    ]) {
      answer = (res) => send(res, 502, body);
      const err = (await downstream()
        .getJson({})
        .catch((e: unknown) => e)) as StatusError;
      expect(err).toBeInstanceOf(StatusError);
      expect(JSON.stringify(err.body)).not.toMatch(/<html>|xxxx|app\.js|localhost|127\.0\.0\.1/);
      expect(JSON.stringify(err.body).length).toBeLessThan(200);
      // The log gets the URL and the start of the body, through the cause.
      expect((err.cause as Error).message.startsWith(`${url} answered HTTP 502: `)).toBe(true);
    }
  });

  it('passes on our failure codes unchanged, with their description when it is one of ours', async () => {
    const cases: [number, object, object][] = [
      [
        408,
        { code: 'ERR10009', description: 'from D' },
        {
          statusCode: 408,
          code: 'ERR10009',
          message: 'CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
          description: 'Could not get client credentials token in client module',
        },
      ],
      [
        502,
        { code: 'ERR20002', description: 'Downstream service api-x could not be reached' },
        {
          statusCode: 502,
          code: 'ERR20002',
          message: 'DOWNSTREAM_UNAVAILABLE',
          description: 'Downstream service api-x could not be reached',
        },
      ],
      [
        502,
        { code: 'ERR20002' },
        {
          statusCode: 502,
          code: 'ERR20002',
          message: 'DOWNSTREAM_UNAVAILABLE',
          description: 'Downstream service beyond api-d could not be reached',
        },
      ],
      [
        504,
        { code: 'ERR20003', description: 'Downstream service api-x did not answer within 3000 ms' },
        {
          statusCode: 504,
          code: 'ERR20003',
          message: 'DOWNSTREAM_TIMEOUT',
          description: 'Downstream service api-x did not answer within 3000 ms',
        },
      ],
      [
        502,
        { code: 'ERR20003', description: 'Downstream service https://api-x:7444 did not answer' },
        {
          statusCode: 504,
          code: 'ERR20003',
          message: 'DOWNSTREAM_TIMEOUT',
          description: 'Downstream service beyond api-d did not answer in time',
        },
      ],
      [
        502,
        { code: 'ERR20004', description: 'Downstream service api-x answered HTTP 401 ERR10000' },
        {
          statusCode: 502,
          code: 'ERR20004',
          message: 'DOWNSTREAM_BAD_RESPONSE',
          description: 'Downstream service api-x answered HTTP 401 ERR10000',
        },
      ],
      [
        503,
        {
          code: 'ERR10079',
          description: 'Unable to introspect the token from https://oauth2-token:6882',
        },
        {
          statusCode: 503,
          code: 'ERR10079',
          message: 'OAUTH_INTROSPECTION_ERROR',
          description:
            'Unable to introspect the token: the introspection server could not be reached or gave no valid answer',
        },
      ],
      [
        503,
        { code: 'ERR20005', description: 'The kid <b>' },
        {
          statusCode: 503,
          code: 'ERR20005',
          message: 'KEY_SERVER_UNAVAILABLE',
          description: 'A verification key could not be fetched from the key distribution server',
        },
      ],
    ];
    for (const [status, body, expected] of cases) {
      answer = (res) => send(res, status, body);
      const err = (await downstream()
        .getJson({})
        .catch((e: unknown) => e)) as StatusError;
      expect(err.body).toEqual(expected);
    }
  });

  it('a body past maxBodyBytes is ERR20004, not buffered whole', async () => {
    answer = (res) => send(res, 200, ['x'.repeat(1024 * 1024)]);
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 502,
        code: 'ERR20004',
        description: 'Downstream service api-d answered a body larger than 1048576 bytes',
      },
    });
  });

  it('speaks plain HTTP to an http:// downstream', async () => {
    const plain = http.createServer((_req, res) => send(res, 200, ['API D: Message 1']));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const { port } = plain.address() as AddressInfo;
    try {
      await expect(downstream(`http://127.0.0.1:${port}/v1/data`).getJson({})).resolves.toEqual({
        status: 200,
        body: ['API D: Message 1'],
      });
    } finally {
      plain.close();
    }
  });
});

/** A transport that answers from a script, one entry per request (unit tests of the semantics). */
function scripted(...script: (TransportResponse | TransportError)[]) {
  const sent: TransportRequest[] = [];
  const transport: Transport = {
    request: (r) => {
      sent.push(r);
      const next = script.shift();
      if (!next) throw new Error('no more answers scripted');
      return next instanceof TransportError ? Promise.reject(next) : Promise.resolve(next);
    },
  };
  return { transport, sent };
}
const ok = (body: unknown = ['API D: Message 1']): TransportResponse => ({
  status: 200,
  headers: {},
  body: JSON.stringify(body),
});
const answer5xx = (status: number, body: unknown): TransportResponse => ({
  status,
  headers: {},
  body: JSON.stringify(body),
});
const down = (code: TransportError['code'] = 'network') =>
  new TransportError(code, `${code} failure`);

function recording() {
  const seen: string[] = [];
  const events: DownstreamEvents = {
    circuitChanged: ({ downstream, state, previous }) =>
      seen.push(`${downstream} ${previous}->${state}`),
    circuitRejected: ({ downstream }) => seen.push(`${downstream} rejected`),
    downstreamRetried: ({ downstream, reason }) => seen.push(`${downstream} retried ${reason}`),
  };
  return { seen, events };
}

describe('Downstream: a connection the downstream reset while it sat idle', () => {
  it('is sent again once on a fresh connection for a GET, never seen by the caller (real server)', async () => {
    const perSocket = new WeakMap<object, number>();
    let connections = 0;
    const { seen, events } = recording();
    // The server closes each connection when it is reused: what an idle-timed-out keep-alive
    // connection looks like to the client that reuses it.
    const s = https.createServer(
      {
        key: fs.readFileSync(path.join(CERTS, 'server.key')),
        cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
      },
      (req, res) => {
        const n = (perSocket.get(req.socket) ?? 0) + 1;
        perSocket.set(req.socket, n);
        if (n > 1) req.socket.destroy();
        else send(res, 200, ['API D: Message 1']);
      },
    );
    s.on('secureConnection', () => (connections += 1));
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const url = `https://localhost:${(s.address() as AddressInfo).port}/v1/data`;
    const d = new Downstream({
      name: 'api-d',
      url,
      timeoutMs: 1000,
      transport: testClient(),
      events,
    });
    try {
      for (let i = 0; i < 4; i++) {
        await expect(d.getJson({})).resolves.toEqual({ status: 200, body: ['API D: Message 1'] });
        // undici puts a connection back in its pool one turn after its answer.
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Call 1 opens a kept-alive connection; call 2 finds it reset and goes again on a fresh
      // one; call 3 opens a new kept-alive connection, which call 4 finds reset in turn.
      expect(seen).toEqual(['api-d retried stale_connection', 'api-d retried stale_connection']);
      expect(connections).toBe(4);
    } finally {
      s.closeAllConnections();
      s.close();
    }
  });

  it('the resend takes its headers anew when the caller gives them (a header sent once only)', async () => {
    const again = scripted(down('stale_connection'), ok());
    let made = 0;
    await new Downstream({
      name: 'api-d',
      url: 'https://api-d:7444',
      timeoutMs: 1000,
      transport: again.transport,
    }).send({ DPoP: 'proof-0' }, { resendHeaders: async () => ({ DPoP: `proof-${++made}` }) });
    expect(again.sent.map((r) => [r.headers, r.freshConnection ?? false])).toEqual([
      [{ Accept: 'application/json', DPoP: 'proof-0' }, false],
      [{ Accept: 'application/json', DPoP: 'proof-1' }, true],
    ]);
  });

  it('a second failure on the fresh connection is the error; a new connection reset is not retried', async () => {
    const twice = scripted(down('stale_connection'), down('stale_connection'));
    const { seen, events } = recording();
    await expect(
      new Downstream({
        name: 'api-d',
        url: 'https://api-d:7444',
        timeoutMs: 1000,
        transport: twice.transport,
        events,
      }).getJson({}),
    ).rejects.toMatchObject({ code: 'ERR20002', cause: { code: 'stale_connection' } });
    expect(twice.sent.map((r) => r.freshConnection ?? false)).toEqual([false, true]);
    expect(seen).toEqual(['api-d retried stale_connection']);

    const fresh = scripted(down('network'));
    await expect(
      new Downstream({
        name: 'api-d',
        url: 'https://api-d:7444',
        timeoutMs: 1000,
        transport: fresh.transport,
      }).getJson({}),
    ).rejects.toMatchObject({ code: 'ERR20002' });
    expect(fresh.sent).toHaveLength(1);
  });

  it('sends the request time-out and the body limit, the path appended to the base URL', async () => {
    const t = scripted(ok(), ok());
    const d = new Downstream({
      name: 'petstore',
      url: 'https://petstore:8443/',
      timeoutMs: 3000,
      transport: t.transport,
    });
    await d.getJson({ 'X-Correlation-Id': 'c' }, '/v2/pet/1');
    await d.getJson({}, 'v2/pet/2');
    expect(t.sent.map((r) => [r.url.href, r.timeoutMs, r.maxBodyBytes, r.method])).toEqual([
      ['https://petstore:8443/v2/pet/1', 3000, 1024 * 1024, 'GET'],
      ['https://petstore:8443/v2/pet/2', 3000, 1024 * 1024, 'GET'],
    ]);
    expect(t.sent[0].headers).toEqual({ Accept: 'application/json', 'X-Correlation-Id': 'c' });
  });

  it('over HTTP/2, a GET in flight when the downstream stops gracefully (GOAWAY) ends on its session; the next call opens a new one', async () => {
    const { seen, events } = recording();
    const sessions: http2.ServerHttp2Session[] = [];
    let paths = 0;
    let release: (() => void) | undefined;
    const h2 = http2.createSecureServer(
      {
        key: fs.readFileSync(path.join(CERTS, 'server.key')),
        cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
      },
      (_req, res) => {
        paths += 1;
        const answer = () => send(res as unknown as http.ServerResponse, 200, [`answer ${paths}`]);
        // The second request is held until its session has been told to go away.
        if (paths === 2) release = answer;
        else answer();
      },
    );
    h2.on('session', (session: http2.ServerHttp2Session) => sessions.push(session));
    await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
    const d = new Downstream({
      name: 'api-d',
      url: `https://localhost:${(h2.address() as AddressInfo).port}/v1/data`,
      timeoutMs: 2000,
      transport: testClient({ enableHttp2: true }),
      events,
    });
    try {
      await expect(d.getJson({})).resolves.toEqual({ status: 200, body: ['answer 1'] });
      const inFlight = d.getJson({});
      await new Promise<void>((resolve) => {
        const wait = () => (release ? resolve() : setImmediate(wait));
        wait();
      });
      // A graceful stop: GOAWAY covers the stream in flight, which ends on its session.
      sessions[0].close();
      release!();
      await expect(inFlight).resolves.toEqual({ status: 200, body: ['answer 2'] });
      expect(seen).toEqual([]);
      // The next call opens a new session.
      await expect(d.getJson({})).resolves.toEqual({ status: 200, body: ['answer 3'] });
      expect(sessions).toHaveLength(2);
    } finally {
      for (const session of sessions) session.destroy();
      h2.close();
    }
  });
});

describe('Downstream: the circuit breaker (injected clock)', () => {
  const breakerOf = (transport: Transport, events?: DownstreamEvents, now = () => 0) =>
    new Downstream({
      name: 'api-d',
      url: 'https://api-d:7444/v1/data',
      timeoutMs: 1000,
      transport,
      breaker: { errorThreshold: 2, resetTimeoutMs: 7000 },
      now,
      events,
    });

  it('opens after errorThreshold failures in a row; then fails at once with 503 ERR20011 and Retry-After, sending nothing', async () => {
    let t = 0;
    const s = scripted(down('network'), down('timeout'));
    const { seen, events } = recording();
    const d = breakerOf(s.transport, events, () => t);
    await expect(d.getJson({})).rejects.toMatchObject({ code: 'ERR20002' });
    await expect(d.getJson({})).rejects.toMatchObject({ code: 'ERR20003' });
    t = 1500;
    const fast = (await d.getJson({}).catch((e: unknown) => e)) as StatusError;
    expect(fast).toBeInstanceOf(StatusError);
    expect(fast.body).toEqual({
      statusCode: 503,
      code: 'ERR20011',
      message: 'DOWNSTREAM_CIRCUIT_OPEN',
      description: 'Downstream service api-d is not called for now: it failed too often in a row',
    });
    expect(fast.headers).toEqual({ 'Retry-After': '6' });
    expect(s.sent).toHaveLength(2);
    expect(seen).toEqual(['api-d closed->open', 'api-d rejected']);
  });

  it('after resetTimeout one trial call: an answer closes the circuit, no answer reopens it', async () => {
    let t = 0;
    const s = scripted(down(), down(), down('connect_timeout'), ok());
    const { seen, events } = recording();
    const d = breakerOf(s.transport, events, () => t);
    await d.getJson({}).catch(() => undefined);
    await d.getJson({}).catch(() => undefined);
    t = 7000;
    await expect(d.getJson({})).rejects.toMatchObject({ code: 'ERR20002' }); // the trial fails
    await expect(d.getJson({})).rejects.toMatchObject({ code: 'ERR20011' });
    t = 14_000;
    await expect(d.getJson({})).resolves.toMatchObject({ status: 200 });
    expect(d.breaker?.state).toBe('closed');
    expect(seen).toEqual([
      'api-d closed->open',
      'api-d open->half_open',
      'api-d half_open->open',
      'api-d rejected',
      'api-d open->half_open',
      'api-d half_open->closed',
    ]);
  });

  it("counts the downstream's own failures only: a 4xx, a 401 or a failure passed on from further down is an answer", async () => {
    const s = scripted(
      answer5xx(401, { code: 'ERR10000' }),
      answer5xx(502, {
        code: 'ERR20002',
        description: 'Downstream service api-x could not be reached',
      }),
      answer5xx(503, { code: 'ERR20011' }),
      answer5xx(404, { code: 'ERR10007' }),
      answer5xx(502, { code: 'ERR20002' }),
      answer5xx(500, { code: 'ERR10010' }),
      answer5xx(503, '<html>proxy</html>'),
    );
    const d = breakerOf(s.transport);
    for (let i = 0; i < 5; i++) await d.getJson({}).catch(() => undefined);
    expect(d.breaker?.state).toBe('closed');
    await expect(d.getJson({})).rejects.toMatchObject({ code: 'ERR20004' }); // its own 500
    await expect(d.getJson({})).rejects.toMatchObject({ code: 'ERR20004' }); // a proxy's 503
    expect(d.breaker?.state).toBe('open');
  });

  it('passes on ERR20011 from further down with its description, and errorThreshold 0 means no breaker', async () => {
    const s = scripted(
      answer5xx(503, {
        code: 'ERR20011',
        description: 'Downstream service api-d is not called for now: it failed too often in a row',
      }),
    );
    const d = new Downstream({
      name: 'api-c',
      url: 'https://api-c:7443/v1/data',
      timeoutMs: 1000,
      transport: s.transport,
      breaker: { errorThreshold: 0, resetTimeoutMs: 7000 },
    });
    expect(d.breaker).toBeUndefined();
    const err = (await d.getJson({}).catch((e: unknown) => e)) as StatusError;
    expect(err.body).toEqual({
      statusCode: 503,
      code: 'ERR20011',
      message: 'DOWNSTREAM_CIRCUIT_OPEN',
      description: 'Downstream service api-d is not called for now: it failed too often in a row',
    });
  });
});
