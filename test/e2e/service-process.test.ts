import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  httpsRequest,
  rawRequest,
  CERTS,
  configDir,
  ROOT,
  SECURITY_ON,
  startExpectingFailure,
  startService,
  type ServiceProcess,
} from '@chain/testkit';

// A built service as the process users run, at its HTTP edges and at its end.
vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

const serverYml = (extra = '') =>
  `serviceId: e2e\nip: 127.0.0.1\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n${extra}`;

describe.each(['native', 'express'])('the petstore process on the %s host', (framework) => {
  let petstore: ServiceProcess;
  beforeAll(async () => {
    petstore = await startService('petstore', {
      configDir: configDir({ 'server.yml': serverYml(`framework: ${framework}\n`) }),
    });
  });
  afterAll(() => petstore.stop());

  it('logs the host it runs on', () => {
    expect(JSON.parse(petstore.lines[0])).toMatchObject({ protocol: 'https', framework });
  });

  it('answers a 200 KB header 431 with a catalogue body, not a reset connection', async () => {
    const answer = await rawRequest(
      petstore.port,
      `GET /v2/pet/1 HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'x'.repeat(200 * 1024)}\r\n\r\n`,
    );
    expect({ status: answer.status, body: JSON.parse(answer.body) }).toEqual({
      status: 431,
      body: {
        statusCode: 431,
        code: 'ERR20008',
        message: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
        description: 'The request headers are larger than the limit of 131072 bytes',
      },
    });
  });

  it('answers a malformed request line 400 with a catalogue body', async () => {
    const answer = await rawRequest(petstore.port, 'GET /v2/pet/1 HTTP/9.9\r\n\r\n');
    expect({ status: answer.status, code: JSON.parse(answer.body).code }).toEqual({
      status: 400,
      code: 'ERR20007',
    });
  });

  it('answers HEAD /health, and 405 with Allow on the petstore path', async () => {
    const head = await httpsRequest(`https://localhost:${petstore.port}/health`, {
      method: 'HEAD',
    });
    expect({ status: head.status, text: head.text }).toEqual({ status: 200, text: '' });
    const post = await httpsRequest(`https://localhost:${petstore.port}/v2/pet/1`, {
      method: 'POST',
    });
    expect({ status: post.status, allow: post.headers.allow, code: post.body }).toEqual({
      status: 405,
      allow: 'GET, HEAD, OPTIONS',
      code: expect.objectContaining({ code: 'ERR10008' }),
    });
  });
});

describe('stopping', () => {
  it('stops on SIGTERM (exit 0) when the reader of its stdout is gone', async () => {
    const svc = await startService('api-d', {
      configDir: configDir({ 'server.yml': serverYml() }),
    });
    // The log reader dies: every write to stdout now fails with EPIPE.
    svc.child.stdout!.destroy();
    expect((await httpsRequest(`https://localhost:${svc.port}/v1/data`)).status).toBe(200);
    const started = Date.now();
    // A grace of 8 s before SIGKILL: a service that hangs exits with null, not 0.
    expect(await svc.stop(8000)).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('a start that fails says why in one line', () => {
  it('a server.yml keyFile that is a certificate names the file and the key, without OpenSSL codes or a stack', async () => {
    const dir = configDir({
      'server.yml': serverYml().replace(`${CERTS}/server.key`, `${CERTS}/server.crt`),
    });
    const { code, stderr } = await startExpectingFailure('petstore', dir);
    expect({ code, stderr }).toEqual({
      code: 1,
      stderr: `Cannot start: Config error in ${path.join(dir, 'server.yml')} at key "keyFile": is not a PEM private key (or it is encrypted)\n`,
    });
  });

  it('a server.yml framework that does not exist', async () => {
    const dir = configDir({ 'server.yml': serverYml('framework: koa\n') });
    const { code, stderr } = await startExpectingFailure('api-d', dir);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Cannot start: Config error in ${path.join(dir, 'server.yml')} at key "framework": Invalid option: expected one of "native"|"express"\n`,
    );
  });
});

describe('a token server that does not answer', () => {
  it('is said at start, before any request or /ready asks, in one line without a stack', async () => {
    const closed = net.createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as net.AddressInfo;
    closed.close();
    const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
    const client = read('services/api-c/config/client.yml').replace(
      'server_url: https://localhost:6882',
      `server_url: https://127.0.0.1:${port}`,
    );
    const apiC = await startService('api-c', {
      configDir: configDir({
        'server.yml': serverYml(),
        'security.yml': read('config/local/api-c/security.yml'),
        'client.yml': client,
      }),
    });
    try {
      const refused = `connect ECONNREFUSED 127.0.0.1:${port}`;
      const url = `https://127.0.0.1:${port}`;
      const atStart = await apiC.waitForLine((l) => l.includes('cannot be reached'));
      expect(JSON.parse(atStart)).toEqual({
        level: 40,
        time: expect.any(String),
        service: 'e2e',
        url,
        cause: refused,
        msg: `token server ${url} cannot be reached: ${refused}`,
      });
      // /ready says it too, in one line with the causes and without a stack.
      const ready = await httpsRequest(`https://localhost:${apiC.port}/ready`);
      expect(ready.status).toBe(503);
      const line = await apiC.waitForLine((l) => l.includes('not ready'));
      expect(JSON.parse(line)).toEqual({
        level: 40,
        time: expect.any(String),
        service: 'e2e',
        check: 'token',
        cause: `Token for client api-c-client from ${url}/oauth2/token: the token server could not be reached: ${refused}`,
        msg: 'not ready: token ERR10009 CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
      });
    } finally {
      await apiC.stop();
    }
  });
});

describe('the bundle (rolldown.config.mjs)', () => {
  it('runs from its dist/ and config/ alone, without node_modules: every module is in it', async () => {
    const alone = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-bundle-'));
    for (const folder of ['dist', 'config']) {
      fs.cpSync(path.join(ROOT, 'services', 'api-d', folder), path.join(alone, folder), {
        recursive: true,
      });
    }
    expect(fs.existsSync(path.join(alone, 'node_modules'))).toBe(false);
    const apiD = await startService('api-d', {
      script: path.join(alone, 'dist', 'index.js'),
      configDir: configDir({ 'server.yml': serverYml(), 'security.yml': SECURITY_ON }),
    });
    try {
      const health = await httpsRequest(`https://localhost:${apiD.port}/health`);
      expect({ status: health.status, body: health.body }).toEqual({
        status: 200,
        body: { status: 'UP', serviceId: 'e2e' },
      });
      // No token: the security stage of the bundle answers as the catalogue says.
      const data = await httpsRequest(`https://localhost:${apiD.port}/v1/data`);
      expect({ status: data.status, code: (data.body as { code: string }).code }).toEqual({
        status: 401,
        code: 'ERR10002',
      });
    } finally {
      await apiD.stop();
      fs.rmSync(alone, { recursive: true, force: true });
    }
  });
});
