import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import {
  createServiceApp,
  startService,
  type Framework,
  type RunningService,
  type ServiceConfig,
} from '../src/index.js';
import { CERTS, configDir, httpsOutcome, type Outcome } from '@chain/testkit';
import { FIXTURE, FRAMEWORKS } from './support.js';

// server.yml enableTwoWayTls over real sockets: what a client without a certificate, with one of
// another CA, with an expired one and with a good one gets; the probe port; the thumbprint in
// the request context.

const CLIENTS = path.join(CERTS, 'clients');
const read = (file: string) => fs.readFileSync(file);
const CA = read(path.join(CERTS, 'ca.crt'));

interface ClientCert {
  key: Buffer;
  cert: Buffer;
}
const pem = (file: string): ClientCert => ({ key: read(file), cert: read(file) });
const GOOD = pem(path.join(CLIENTS, 'api-a.pem'));
/** Signed by the development CA, which signs the servers' certificates: not a client CA here. */
const OTHER_CA = pem(path.join(CERTS, 'client.pem'));

/** A client certificate of the client CA whose validity ended before it began (openssl -days -1). */
function expiredCert(): ClientCert {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expired-client-'));
  const file = (name: string) => path.join(dir, name);
  fs.writeFileSync(file('ext'), 'extendedKeyUsage=clientAuth\n');
  execFileSync(
    'openssl',
    [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=expired',
      '-keyout',
      file('key'),
      '-out',
      file('csr'),
    ],
    { stdio: 'ignore' },
  );
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      file('csr'),
      '-CA',
      path.join(CLIENTS, 'ca.crt'),
      '-CAkey',
      path.join(CLIENTS, 'ca.key'),
      '-CAcreateserial',
      '-CAserial',
      file('srl'),
      '-days',
      '-1',
      '-extfile',
      file('ext'),
      '-out',
      file('crt'),
    ],
    { stdio: 'ignore' },
  );
  return { key: read(file('key')), cert: read(file('crt')) };
}

/** RFC 8705 x5t#S256 of a PEM certificate, as openssl computes the SHA-256 fingerprint. */
function opensslThumbprint(certFile: string): string {
  const out = execFileSync('openssl', [
    'x509',
    '-in',
    certFile,
    '-noout',
    '-fingerprint',
    '-sha256',
  ])
    .toString()
    .trim();
  const hex = out.slice(out.indexOf('=') + 1).replace(/:/g, '');
  return Buffer.from(hex, 'hex').toString('base64url');
}

/** One HTTPS/1.1 GET on a fresh connection (or the agent's): the answer, or the error and no answer. */
const get = (
  port: number,
  urlPath: string,
  client?: ClientCert,
  agent: https.Agent | false = false,
) =>
  httpsOutcome(`https://127.0.0.1:${port}${urlPath}`, { servername: 'localhost', client, agent });

/** GETs on one HTTP/2 session: the answers, or the session's error and no answer. */
function h2Get(port: number, paths: string[], client?: ClientCert): Promise<Outcome[] | Outcome> {
  return new Promise((resolve) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, {
      ca: CA,
      servername: 'localhost',
      ...client,
    });
    session.on('error', (err: Error & { code?: string }) => resolve({ error: err.code }));
    const one = (urlPath: string) =>
      new Promise<Outcome>((done, fail) => {
        const stream = session.request({ ':path': urlPath });
        let body = '';
        let status = 0;
        stream.setEncoding('utf8');
        stream.on('response', (headers) => (status = Number(headers[':status'])));
        stream.on('data', (d: string) => (body += d));
        // A stream closed without a response: the connection was refused.
        stream.on('end', () =>
          status ? done({ status, body }) : fail(Object.assign(new Error(), { code: 'NO_ANSWER' })),
        );
        stream.on('error', (err: Error & { code?: string }) => fail(err));
        stream.end();
      });
    // One after the other: the same session carries each.
    void paths
      .reduce<Promise<Outcome[]>>(
        (all, p) => all.then(async (answers) => [...answers, await one(p)]),
        Promise.resolve([]),
      )
      .then(
        (answers) => {
          session.close();
          resolve(answers);
        },
        (err: Error & { code?: string }) => {
          session.destroy();
          resolve({ error: err.code });
        },
      );
  });
}

const SERVER = (extra: string) =>
  [
    'serviceId: two-way-test',
    'ip: 127.0.0.1',
    'enableHttps: true',
    'httpsPort: 0',
    `keyFile: ${CERTS}/server.key`,
    `certFile: ${CERTS}/server.crt`,
    extra,
  ].join('\n');

const TWO_WAY = `enableTwoWayTls: true\ntruststoreName: ${CLIENTS}/ca.crt\nprobePort: 0\n`;

/** The runtime's fixture service on HTTPS: GET /v1/open answers the request's thumbprint. */
async function start(framework: Framework, serverYml: string, lines: string[] = []) {
  return startService({
    bundledDir: FIXTURE,
    loaderOptions: { overrideDir: configDir({ 'server.yml': serverYml }) },
    logDestination: { write: (line: string) => void lines.push(line) },
    createApp: (config: ServiceConfig, logger) =>
      createServiceApp({
        config: { ...config, server: { ...config.server, framework } },
        logger,
        routes: (routes) => {
          routes.get('/v1/open', ({ context }) => ({
            thumbprint: context.clientCertThumbprint ?? null,
          }));
        },
      }),
  });
}

const GOOD_THUMBPRINT = () => opensslThumbprint(path.join(CLIENTS, 'api-a.crt'));

describe.each(FRAMEWORKS)('server.yml enableTwoWayTls on the %s host', (framework) => {
  let running: RunningService;
  const lines: string[] = [];
  let expired: ClientCert;
  beforeAll(async () => {
    expired = expiredCert();
    running = await start(framework, SERVER(TWO_WAY), lines);
  });
  afterAll(() => running.close());

  it('a client without a certificate gets a TLS alert (certificate required), never an answer', async () => {
    expect(await get(running.ports.https!, '/v1/open')).toEqual({
      error: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    });
    // The probes too: the service's port answers nobody without a certificate.
    expect(await get(running.ports.https!, '/health')).toEqual({
      error: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    });
  });

  // Node's TLS server completes the handshake whatever the chain's verification said and then
  // closes the connection of a certificate that failed it, unread (rejectUnauthorized): the
  // client's request meets a closed connection.
  it('a certificate of another CA, or an expired one: the connection is closed, never an answer', async () => {
    expect(await get(running.ports.https!, '/v1/open', OTHER_CA)).toEqual({ error: 'ECONNRESET' });
    expect(await get(running.ports.https!, '/v1/open', expired)).toEqual({ error: 'ECONNRESET' });
  });

  it("a good certificate: 200, and the context holds its x5t#S256 (openssl's SHA-256 fingerprint, base64url)", async () => {
    const thumbprint = GOOD_THUMBPRINT();
    expect(thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await get(running.ports.https!, '/v1/open', GOOD)).toEqual({
      status: 200,
      body: JSON.stringify({ thumbprint }),
    });
    // Each caller its own: another client certificate of the same CA, another thumbprint.
    const other = pem(path.join(CLIENTS, 'client.pem'));
    expect(await get(running.ports.https!, '/v1/open', other)).toEqual({
      status: 200,
      body: JSON.stringify({ thumbprint: opensslThumbprint(path.join(CLIENTS, 'client.crt')) }),
    });
  });

  it('the thumbprint is computed once per connection, not per request', async () => {
    const peer = vi.spyOn(tls.TLSSocket.prototype, 'getPeerX509Certificate');
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const answers = [];
      for (let i = 0; i < 3; i++)
        answers.push(await get(running.ports.https!, '/v1/open', GOOD, agent));
      expect(answers).toEqual(
        Array(3).fill({ status: 200, body: JSON.stringify({ thumbprint: GOOD_THUMBPRINT() }) }),
      );
      expect(peer).toHaveBeenCalledTimes(1);
    } finally {
      agent.destroy();
      peer.mockRestore();
    }
  });

  it('a resumed TLS session keeps its certificate and thumbprint', async () => {
    const port = running.ports.https!;
    const session = await new Promise<Buffer>((resolve, reject) => {
      const socket = tls.connect({
        host: '127.0.0.1',
        port,
        ca: CA,
        servername: 'localhost',
        ...GOOD,
      });
      socket.once('session', (s: Buffer) => {
        resolve(s);
        socket.end();
      });
      socket.on('error', reject);
    });
    const resumed = await new Promise<{ reused: boolean; text: string }>((resolve, reject) => {
      const socket = tls.connect(
        { host: '127.0.0.1', port, ca: CA, servername: 'localhost', session, ...GOOD },
        () => socket.end('GET /v1/open HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
      );
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (text += d));
      socket.on('end', () => resolve({ reused: socket.isSessionReused(), text }));
      socket.on('error', reject);
    });
    expect(resumed.reused).toBe(true);
    expect(resumed.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(
      resumed.text.endsWith(`\r\n\r\n${JSON.stringify({ thumbprint: GOOD_THUMBPRINT() })}`),
    ).toBe(true);
  });

  it('the probe port answers /health and /ready without a certificate, and nothing else', async () => {
    const port = running.ports.probe!;
    expect(port).toEqual(expect.any(Number));
    expect(port).not.toBe(running.ports.https);
    expect(await get(port, '/health')).toEqual({
      status: 200,
      body: JSON.stringify({ status: 'UP', serviceId: 'two-way-test' }),
    });
    expect(await get(port, '/ready')).toEqual({
      status: 200,
      body: JSON.stringify({ status: 'UP', serviceId: 'two-way-test' }),
    });
    const notHere = (p: string) => ({
      status: 404,
      body: JSON.stringify({
        statusCode: 404,
        code: 'ERR20001',
        message: 'RESOURCE_NOT_FOUND',
        description: `Path ${p} on the probe port cannot be found.`,
      }),
    });
    expect(await get(port, '/v1/open')).toEqual(notHere('/v1/open'));
    expect(await get(port, '/metrics')).toEqual(notHere('/metrics'));
    // A certificate is not asked for there: one presented anyway is not read.
    expect(await get(port, '/v1/open?x=1', GOOD)).toEqual(notHere('/v1/open'));
  });

  it('logs both listeners and each refused handshake (the reason, never the certificate)', () => {
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.filter((l) => /listening on/.test(String(l.msg)))).toEqual([
      expect.objectContaining({
        msg: `listening on https port ${running.ports.https}`,
        protocol: 'https',
        port: running.ports.https,
        twoWayTls: true,
      }),
      expect.objectContaining({
        msg: `probes listening on https port ${running.ports.probe}`,
        protocol: 'https',
        port: running.ports.probe,
        probes: true,
        http2: false,
      }),
    ]);
    // The two requests without a certificate of the first test (OpenSSL's refusal; Node gives
    // no event for a certificate refused after the handshake).
    const refused = parsed.filter((l) => l.msg === 'TLS handshake refused');
    expect(refused).toEqual(
      Array(2).fill(
        expect.objectContaining({
          level: 30,
          reason: 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE',
          remoteAddress: '127.0.0.1',
        }),
      ),
    );
  });
});

describe('enableTwoWayTls with enableHttp2 (native host)', () => {
  let running: RunningService;
  beforeAll(async () => {
    running = await start('native', SERVER(`${TWO_WAY}enableHttp2: true\n`));
  });
  afterAll(() => running.close());

  it('h2 with a good certificate: 200 and the thumbprint, computed once for the session', async () => {
    const peer = vi.spyOn(tls.TLSSocket.prototype, 'getPeerX509Certificate');
    try {
      const body = JSON.stringify({ thumbprint: GOOD_THUMBPRINT() });
      expect(await h2Get(running.ports.https!, ['/v1/open', '/v1/open', '/v1/open'], GOOD)).toEqual(
        Array(3).fill({ status: 200, body }),
      );
      expect(peer).toHaveBeenCalledTimes(1);
    } finally {
      peer.mockRestore();
    }
    // HTTP/1.1 clients of the same port (ALPN fallback) too.
    expect(await get(running.ports.https!, '/v1/open', GOOD)).toEqual({
      status: 200,
      body: JSON.stringify({ thumbprint: GOOD_THUMBPRINT() }),
    });
  });

  it('h2 without a certificate: the alert; with another CA: a closed connection; never an answer', async () => {
    expect(await h2Get(running.ports.https!, ['/v1/open'])).toEqual({
      error: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    });
    const refused = await h2Get(running.ports.https!, ['/v1/open'], OTHER_CA);
    expect(refused).toEqual({ error: expect.stringMatching(/^(NO_ANSWER|ECONNRESET)$/) });
  });

  it('the probe port speaks HTTP/1.1 without a certificate', async () => {
    expect(await get(running.ports.probe!, '/health')).toEqual({
      status: 200,
      body: JSON.stringify({ status: 'UP', serviceId: 'two-way-test' }),
    });
  });
});

describe('without enableTwoWayTls (the default)', () => {
  it('no certificate is asked for; the context has no thumbprint even when a client offers one', async () => {
    const running = await start('native', SERVER(''));
    try {
      expect(running.ports.probe).toBeUndefined();
      expect(await get(running.ports.https!, '/v1/open')).toEqual({
        status: 200,
        body: JSON.stringify({ thumbprint: null }),
      });
      expect(await get(running.ports.https!, '/v1/open', GOOD)).toEqual({
        status: 200,
        body: JSON.stringify({ thumbprint: null }),
      });
    } finally {
      await running.close();
    }
  });
});

describe('probePort on a plain HTTP service', () => {
  it('is a plain HTTP listener too, serving the probes only', async () => {
    const running = await startService({
      bundledDir: FIXTURE,
      loaderOptions: {
        overrideDir: configDir({
          'server.yml':
            'serviceId: plain\nip: 127.0.0.1\nenableHttps: false\nenableHttp: true\nhttpPort: 0\nprobePort: 0\n',
        }),
      },
      logDestination: { write: () => undefined },
      createApp: (config, logger) =>
        createServiceApp({ config, logger, routes: (r) => r.get('/v1/open', () => ['open']) }),
    });
    const plain = (port: number, urlPath: string) =>
      new Promise<Outcome>((resolve) => {
        http
          .get({ host: '127.0.0.1', port, path: urlPath }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode, body }));
          })
          .on('error', (err: Error & { code?: string }) => resolve({ error: err.code }));
      });
    try {
      expect(await plain(running.ports.http!, '/v1/open')).toEqual({
        status: 200,
        body: '["open"]',
      });
      expect(await plain(running.ports.probe!, '/health')).toEqual({
        status: 200,
        body: JSON.stringify({ status: 'UP', serviceId: 'plain' }),
      });
      expect((await plain(running.ports.probe!, '/v1/open')).status).toBe(404);
    } finally {
      await running.close();
    }
  });
});

describe('openssl s_client against enableTwoWayTls', () => {
  let running: RunningService;
  beforeAll(async () => {
    running = await start('native', SERVER(TWO_WAY));
  });
  afterAll(() => running.close());

  /** s_client's whole output (stdout and stderr) after it sent one request. */
  const sClient = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(
        'openssl',
        [
          's_client',
          '-connect',
          `127.0.0.1:${running.ports.https}`,
          '-servername',
          'localhost',
          '-CAfile',
          path.join(CERTS, 'ca.crt'),
          '-ign_eof',
          ...args,
        ],
        { stdio: ['pipe', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', () => resolve(out));
      child.stdin.end('GET /v1/open HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });

  it('no certificate: "alert certificate required"; another CA: closed; no HTTP answer; a good one: 200', async () => {
    const refused = await sClient([]);
    expect(refused).toMatch(/alert certificate required/);
    expect(refused).not.toMatch(/HTTP\/1\.1/);
    const otherCa = await sClient([
      '-cert',
      path.join(CERTS, 'client.crt'),
      '-key',
      path.join(CERTS, 'client.key'),
    ]);
    expect(otherCa).toMatch(/CONNECTED\(/);
    expect(otherCa).not.toMatch(/HTTP\/1\.1/);
    const answered = await sClient([
      '-cert',
      path.join(CLIENTS, 'api-a.crt'),
      '-key',
      path.join(CLIENTS, 'api-a.key'),
    ]);
    expect(answered).toMatch(/HTTP\/1\.1 200 OK/);
    expect(answered).toContain(JSON.stringify({ thumbprint: GOOD_THUMBPRINT() }));
  });
});
