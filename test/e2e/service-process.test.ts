import path from 'node:path';
import {
  httpsRequest,
  rawRequest,
  CERTS,
  configDir,
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
