import fs from 'node:fs';
import type http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createHttpServer, ShutdownGate } from '../src/http-server.js';
import type { ServerConfig } from '../src/server-config.js';
import { rawRequest, CERTS } from '@chain/testkit';
import { captureLogger, fixtureConfig, fixtureService, FRAMEWORKS } from './support.js';

const tlsFiles = {
  key: fs.readFileSync(path.join(CERTS, 'server.key')),
  cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
};

/** The fixture service behind a real HTTPS server made by createHttpServer, on port 0. */
async function serve(framework: 'native' | 'express', server: Partial<ServerConfig> = {}) {
  const config = fixtureConfig(framework);
  const log = captureLogger();
  const service = fixtureService(config, undefined, log);
  const gate = new ShutdownGate();
  const httpServer = createHttpServer(
    'https',
    { ...config.server, enableHttp2: framework === 'native', ...server },
    // The native host serves HTTP/2 with HTTP/1.1 for clients that do not offer it (as
    // shipped): the raw HTTP/1.1 requests below reach its fallback.
    { listener: service.app.listener, gate, http2: framework === 'native' },
    log.logger,
    tlsFiles,
  ) as http.Server;
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const port = (httpServer.address() as AddressInfo).port;
  return { port, gate, log, service, server: httpServer };
}

const close = (s: { server: http.Server; gate: ShutdownGate }) =>
  new Promise<void>((resolve) => {
    s.gate.closeAll();
    s.server.close(() => resolve());
  });

const body = (statusCode: number, code: string, message: string, description: string) =>
  JSON.stringify({ statusCode, code, message, description });

describe.each(FRAMEWORKS)('the HTTP edges of a service on the %s host', (framework) => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    s = await serve(framework);
  });
  afterAll(() => close(s));

  it('answers a malformed request line 400 ERR20007 with a catalogue body, not bare text', async () => {
    const answer = await rawRequest(s.port, 'GET /v1/open HTTP/1.1 extra\r\nHost: x\r\n\r\n');
    expect({
      status: answer.status,
      type: answer.headers['content-type'],
      connection: answer.headers.connection,
      body: answer.body,
    }).toEqual({
      status: 400,
      type: 'application/json',
      connection: 'close',
      body: body(
        400,
        'ERR20007',
        'MALFORMED_REQUEST',
        'The request line or a header cannot be parsed',
      ),
    });
  });

  it('answers a malformed header 400 ERR20007', async () => {
    const answer = await rawRequest(
      s.port,
      'GET /v1/open HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
    );
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).code).toBe('ERR20007');
  });

  it('answers a 200 KB header 431 ERR20008, delivered before the connection closes', async () => {
    const big = 'x'.repeat(200 * 1024);
    const answer = await rawRequest(
      s.port,
      `GET /v1/open HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`,
    );
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 431,
      body: body(
        431,
        'ERR20008',
        'REQUEST_HEADER_FIELDS_TOO_LARGE',
        'The request headers are larger than the limit of 131072 bytes',
      ),
    });
  });

  it('lets a 100 KB header (a large token) reach the service', async () => {
    const answer = await rawRequest(
      s.port,
      `GET /v1/open HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(100 * 1024)}\r\nConnection: close\r\n\r\n`,
    );
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 200,
      body: '["open"]',
    });
  });

  it('answers an HTTP/1.1 request without Host 400 ERR20007; HTTP/1.0 needs none', async () => {
    const answer = await rawRequest(s.port, 'GET /v1/open HTTP/1.1\r\n\r\n');
    expect({ status: answer.status, body: JSON.parse(answer.body) }).toEqual({
      status: 400,
      body: {
        statusCode: 400,
        code: 'ERR20007',
        message: 'MALFORMED_REQUEST',
        description: 'An HTTP/1.1 request needs a Host header',
      },
    });
    const old = await rawRequest(s.port, 'GET /v1/open HTTP/1.0\r\n\r\n');
    expect({ status: old.status, body: old.body }).toEqual({ status: 200, body: '["open"]' });
  });

  it('answers an Expect it cannot meet 417 ERR20010', async () => {
    const answer = await rawRequest(
      s.port,
      'GET /v1/open HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n',
    );
    expect({ status: answer.status, code: JSON.parse(answer.body).code }).toEqual({
      status: 417,
      code: 'ERR20010',
    });
  });

  it('answers 503 ERR20006 with Connection: close while stopping', async () => {
    const stopped = await serve(framework);
    stopped.gate.stop();
    try {
      const answer = await rawRequest(stopped.port, 'GET /v1/open HTTP/1.1\r\nHost: x\r\n\r\n');
      expect({
        status: answer.status,
        connection: answer.headers.connection,
        retry: answer.headers['retry-after'],
        body: answer.body,
      }).toEqual({
        status: 503,
        connection: 'close',
        retry: '1',
        body: body(503, 'ERR20006', 'SERVICE_STOPPING', 'The service is shutting down'),
      });
    } finally {
      await close(stopped);
    }
  });

  it('logs a refused request in one line, without a stack', () => {
    const lines = s.log.lines().filter((l) => l.msg === 'request refused before it was read');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines[0]).toMatchObject({ level: 30, code: 'ERR20007', reason: expect.any(String) });
    expect(JSON.stringify(lines)).not.toMatch(/\n\s+at /);
  });

  it('sets the time-outs of server.yml on the server', () => {
    expect({
      headers: s.server.headersTimeout,
      request: s.server.requestTimeout,
      keepAlive: s.server.keepAliveTimeout,
    }).toEqual({ headers: 20_000, request: 30_000, keepAlive: 72_000 });
  });
});

describe.each(FRAMEWORKS)('request time-outs on the %s host', (framework) => {
  it('answers a client that does not finish its headers 408 ERR20009', async () => {
    const s = await serve(framework, { headersTimeoutMs: 300, requestTimeoutMs: 300 });
    try {
      const started = Date.now();
      // Half a request: the server's time-out, not the test, ends the wait.
      const answer = await rawRequest(s.port, 'GET /v1/open HTTP/1.1\r\nHost: x\r\n');
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 408,
        body: body(408, 'ERR20009', 'REQUEST_TIMEOUT', 'The request was not received in time'),
      });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await close(s);
    }
  });
});

describe('HTTP/2 on the native host', () => {
  const get = (port: number, urlPath: string) =>
    new Promise<{ status: number; protocol: string; body: string }>((resolve, reject) => {
      const session = http2.connect(`https://127.0.0.1:${port}`, {
        ca: fs.readFileSync(path.join(CERTS, 'ca.crt')),
        servername: 'localhost',
      });
      session.on('error', reject);
      const stream = session.request({ ':path': urlPath });
      let text = '';
      stream.setEncoding('utf8');
      stream.on('response', (headers) => {
        stream.on('data', (chunk: string) => (text += chunk));
        stream.on('end', () => {
          resolve({
            status: Number(headers[':status']),
            protocol: session.alpnProtocol ?? '',
            body: text,
          });
          session.close();
        });
      });
      stream.on('error', reject);
      stream.end();
    });

  it('answers over h2 (ALPN) and over HTTP/1.1 on the same port', async () => {
    const s = await serve('native');
    try {
      expect(await get(s.port, '/v1/open')).toEqual({
        status: 200,
        protocol: 'h2',
        body: '["open"]',
      });
      const one = await rawRequest(
        s.port,
        'GET /v1/open HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      expect({ status: one.status, body: one.body }).toEqual({ status: 200, body: '["open"]' });
    } finally {
      await close(s);
    }
  });

  it('answers an error over h2 with the catalogue body', async () => {
    const s = await serve('native');
    try {
      const answer = await get(s.port, '/v1/nothing-here');
      expect({ status: answer.status, code: JSON.parse(answer.body).code }).toEqual({
        status: 404,
        code: 'ERR10007',
      });
    } finally {
      await close(s);
    }
  });

  it('serves HTTP/1.1 only when server.yml enableHttp2 is false', async () => {
    const s = await serve('native', { enableHttp2: false });
    try {
      await expect(get(s.port, '/v1/open')).rejects.toThrow();
    } finally {
      await close(s);
    }
  });
});
