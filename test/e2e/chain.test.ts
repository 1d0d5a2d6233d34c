import path from 'node:path';
import {
  httpsRequest,
  httpsStub,
  json,
  CERTS,
  configDir,
  startExpectingFailure,
  startService,
  type ServiceProcess,
  SECURITY_ON,
  deferred,
  EIGHT,
} from '@chain/testkit';

vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

const server = (port: number) =>
  `serviceId: e2e\nhttpsPort: ${port}\nip: 127.0.0.1\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`;
const client = `tls:\n  trustStore: ${CERTS}/ca.crt\nrequest:\n  timeout: 1500\n`;
const downstream = (x: string, y: string, port: number) =>
  `api_${y}_host: https://localhost:${port}\napi_${y}_path: /v1/data\n`;

describe('the chain as four real processes over HTTPS', () => {
  const running: ServiceProcess[] = [];
  let d: ServiceProcess;
  let c: ServiceProcess;
  let a: ServiceProcess;
  let cConfig: string;

  beforeAll(async () => {
    d = await startService('api-d', { configDir: configDir({ 'server.yml': server(0) }) });
    cConfig = configDir({
      'server.yml': server(0),
      'client.yml': client,
      'api_c.yml': downstream('c', 'd', d.port),
    });
    c = await startService('api-c', { configDir: cConfig });
    const b = await startService('api-b', {
      configDir: configDir({
        'server.yml': server(0),
        'client.yml': client,
        'api_b.yml': downstream('b', 'c', c.port),
      }),
    });
    a = await startService('api-a', {
      configDir: configDir({
        'server.yml': server(0),
        'client.yml': client,
        'api_a.yml': downstream('a', 'b', b.port),
      }),
    });
    running.push(d, c, b, a);
  });

  afterAll(async () => {
    await Promise.all(running.map((s) => s.stop()));
  });

  it('answers the eight messages in order from api-a', async () => {
    const res = await httpsRequest(`https://localhost:${a.port}/v1/data`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(EIGHT);
  });

  it('answers a documented error within the time-out while api-c is down, and recovers', async () => {
    const cPort = c.port; // api-c comes back on the same port
    expect(await c.stop()).toBe(0); // graceful stop exits 0

    const started = Date.now();
    const down = await httpsRequest(`https://localhost:${a.port}/v1/data`);
    expect(Date.now() - started).toBeLessThan(1500 * 3);
    expect(down.status).toBe(502);
    expect(down.headers['content-type']).toBe('application/json');
    // api-b could not reach api-c; api-a passes that failure on unchanged.
    expect(down.body).toEqual({
      statusCode: 502,
      code: 'ERR20002',
      message: 'DOWNSTREAM_UNAVAILABLE',
      description: 'Downstream service api-c could not be reached',
    });

    const back = await startService('api-c', {
      configDir: configDir({
        'server.yml': server(cPort),
        'client.yml': client,
        'api_c.yml': downstream('c', 'd', d.port),
      }),
    });
    running.push(back);
    const again = await httpsRequest(`https://localhost:${a.port}/v1/data`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(EIGHT);
  });
});

describe('security switched on from CONFIG_DIR', () => {
  it.each(['petstore', 'api-a', 'api-b', 'api-c', 'api-d'])(
    '%s answers exactly ERR10002 without an Authorization header',
    async (name) => {
      const svc = await startService(name, {
        configDir: configDir({ 'server.yml': server(0), 'security.yml': SECURITY_ON }),
      });
      try {
        const url = name === 'petstore' ? '/v2/pet/1' : '/v1/data';
        const res = await httpsRequest(`https://localhost:${svc.port}${url}`);
        expect(res.status).toBe(401);
        expect(res.headers['content-type']).toBe('application/json');
        expect(res.text).toBe(
          '{"statusCode":401,"code":"ERR10002","message":"MISSING_AUTH_TOKEN","description":"No Authorization header or the token is not bearer type"}',
        );
      } finally {
        await svc.stop();
      }
    },
  );
});

describe('a broken config file stops the service with a message naming file and key', () => {
  it('bad YAML', async () => {
    const dir = configDir({ 'server.yml': server(0), 'security.yml': 'enableVerifyJwt: [true\n' });
    const { code, stderr } = await startExpectingFailure('api-a', dir);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      new RegExp(
        `^Cannot start: Config error in ${path.join(dir, 'security.yml')}: not valid YAML \\(line \\d+\\)`,
      ),
    );
  });

  it('a port that is a string', async () => {
    const dir = configDir({ 'server.yml': server(0).replace('httpsPort: 0', 'httpsPort: "7441"') });
    const { code, stderr } = await startExpectingFailure('petstore', dir);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Cannot start: Config error in ${path.join(dir, 'server.yml')} at key "httpsPort": expected number, received string\n`,
    );
  });

  it('a certificate path that does not exist', async () => {
    const dir = configDir({
      'server.yml': server(0).replace(`${CERTS}/server.crt`, 'nope/server.crt'),
    });
    const { code, stderr } = await startExpectingFailure('api-d', dir);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Cannot start: Config error in ${path.join(dir, 'server.yml')} at key "certFile": file not found: ${path.join(dir, 'nope/server.crt')}\n`,
    );
  });

  it('a security certificate that does not exist when verification is on', async () => {
    const dir = configDir({
      'server.yml': server(0),
      'security.yml': "enableVerifyJwt: true\njwt:\n  certificate:\n    '100': missing.crt\n",
    });
    const { code, stderr } = await startExpectingFailure('api-b', dir);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Cannot start: Config error in ${path.join(dir, 'security.yml')} at key "jwt.certificate.100": file not found: ${path.join(dir, 'missing.crt')}\n`,
    );
  });
});

describe('graceful stop', () => {
  it('finishes an in-flight request on SIGTERM (with Connection: close), then exits 0', async () => {
    const arrived = deferred<void>();
    const release = deferred<void>();
    const slow = await httpsStub((_req, res) => {
      arrived.resolve();
      void release.promise.then(() => json(res, 200, ['API B: Message 1', 'API B: Message 2']));
    });
    const a = await startService('api-a', {
      configDir: configDir({
        'server.yml': server(0),
        'client.yml': client,
        'api_a.yml': downstream('a', 'b', slow.port),
      }),
    });
    try {
      const inFlight = httpsRequest(`https://localhost:${a.port}/v1/data`);
      await arrived.promise; // api-a waits on its downstream: the request is in flight
      const exit = a.stop();
      await a.waitForLine((l) => l.includes('stopping: finishing in-flight requests'));
      release.resolve();
      const res = await inFlight;
      expect({ status: res.status, connection: res.headers.connection, body: res.body }).toEqual({
        status: 200,
        connection: 'close',
        body: ['API B: Message 1', 'API B: Message 2', 'API A: Message 1', 'API A: Message 2'],
      });
      expect(await exit).toBe(0);
      expect(a.lines[a.lines.length - 1]).toMatch(/"msg":"stopped"/);
      await expect(httpsRequest(`https://localhost:${a.port}/health`)).rejects.toThrow(
        /ECONNREFUSED/,
      );
    } finally {
      await slow.close();
    }
  });
});
