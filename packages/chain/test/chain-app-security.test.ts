import util from 'node:util';
import request from 'supertest';
import {
  devSigningKey,
  mintToken,
  httpsStub,
  json,
  type Stub,
  SECURITY_ON,
  CERTS,
} from '@chain/testkit';
import { createLogger } from '@chain/runtime';
import { createChainApp } from '../src/index.js';
import { serviceConfig, silentLogger } from '../../../test/support/service-config.js';

const primary = devSigningKey('100');
const userToken = mintToken(primary, { clientId: 'chain-user', scope: ['api_b.r'] });

describe("api-b with security on: the caller's token passed on, its own as X-Scope-Token", () => {
  let tokenServer: Stub;
  let downstream: Stub;
  let tokenAnswer: (res: import('node:http').ServerResponse) => void;
  let issued = 0;
  beforeAll(async () => {
    tokenServer = await httpsStub((_req, res) => tokenAnswer(res));
    downstream = await httpsStub((_req, res) => json(res, 200, ['API C: Message 1']));
  });
  afterAll(async () => {
    await tokenServer.close();
    await downstream.close();
  });
  beforeEach(() => {
    tokenServer.requests.splice(0);
    downstream.requests.splice(0);
    issued = 0;
    tokenAnswer = (res) =>
      json(res, 200, {
        access_token: `own-token-${++issued}`,
        token_type: 'bearer',
        expires_in: 600,
      });
  });

  // request.timeout: long enough that 50 calls at once on a busy machine are not cut short
  const files = (client: Partial<{ serverUrl: string; timeout: number; cc: boolean }> = {}) => ({
    'security.yml': SECURITY_ON,
    'api_b.yml': `api_c_host: ${downstream.url}\napi_c_path: /v1/data\n`,
    'client.yml': `tls:
  trustStore: ${CERTS}/ca.crt
request:
  timeout: ${client.timeout ?? 5000}
oauth:
  token:
${client.serverUrl === '' ? '' : `    server_url: ${client.serverUrl ?? tokenServer.url}\n`}${
      client.cc === false
        ? ''
        : `    client_credentials:
      uri: /oauth2/token
      client_id: api-b-client
      scope: [api_c.r, api_c.w]
`
    }`,
  });
  const app = (f: Record<string, string> = files(), logger = silentLogger()) =>
    createChainApp('B')(serviceConfig('api-b', f), logger).listener;

  it("passes the caller's Authorization unchanged, its own token as X-Scope-Token, and the trace ids", async () => {
    const res = await request(app())
      .get('/v1/data')
      .set('Authorization', `Bearer ${userToken}`)
      .set('X-Correlation-Id', 'corr-1')
      .set('X-Traceability-Id', 'trace-1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(['API C: Message 1', 'API B: Message 1', 'API B: Message 2']);
    expect(res.headers['x-correlation-id']).toBe('corr-1');
    expect(res.headers['x-traceability-id']).toBe('trace-1');
    expect(downstream.requests).toHaveLength(1);
    expect(downstream.requests[0]).toMatchObject({
      authorization: `Bearer ${userToken}`,
      'x-scope-token': 'Bearer own-token-1',
      'x-correlation-id': 'corr-1',
      'x-traceability-id': 'trace-1',
    });
    expect(tokenServer.requests).toHaveLength(1);
    expect(tokenServer.requests[0].authorization).toBe(
      'Basic ' + Buffer.from('api-b-client:api-b-secret').toString('base64'),
    );
  });

  it('50 concurrent requests on a cold cache share one token request', async () => {
    const a = app();
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        request(a).get('/v1/data').set('Authorization', `Bearer ${userToken}`),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(tokenServer.requests).toHaveLength(1);
    expect(new Set(downstream.requests.map((h) => h['x-scope-token']))).toEqual(
      new Set(['Bearer own-token-1']),
    );
    // A correlation id is generated when the caller sent none, one per request.
    expect(new Set(downstream.requests.map((h) => h['x-correlation-id'])).size).toBe(50);
  });

  it('a token refused by the token server is ERR10009 (408); the log names the cause, not the secret', async () => {
    tokenAnswer = (res) => json(res, 401, { error: 'invalid_client' });
    const lines: string[] = [];
    const captured = createLogger('api-b', 'silent');
    const spy = vi
      .spyOn(captured, 'warn')
      .mockImplementation(((o: object) => lines.push(util.inspect(o, { depth: 10 }))) as never);
    const res = await request(app(files(), captured))
      .get('/v1/data')
      .set('Authorization', `Bearer ${userToken}`);
    expect(res.status).toBe(408);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual({
      statusCode: 408,
      code: 'ERR10009',
      message: 'CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
      description: 'Could not get client credentials token in client module',
    });
    expect(downstream.requests).toHaveLength(0);
    expect(lines.join('\n')).toContain('refused the client credentials (HTTP 401 invalid_client)');
    expect(lines.join('\n')).not.toContain('api-b-secret');
    spy.mockRestore();
  });

  it('a token server that does not answer is ERR10009 within the time-out', async () => {
    tokenAnswer = () => undefined;
    const started = Date.now();
    const res = await request(app(files({ timeout: 300 })))
      .get('/v1/data')
      .set('Authorization', `Bearer ${userToken}`);
    expect(res.status).toBe(408);
    expect(res.body.code).toBe('ERR10009');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('is ready (GET /ready, no token) only with its own token, and the calls then use that token', async () => {
    // The token server refuses (a wrong secret): not ready, and the answer says why.
    tokenAnswer = (res) => json(res, 401, { error: 'invalid_client' });
    const f = files();
    f['client.yml'] = f['client.yml'].replace(
      'oauth:\n  token:\n',
      'oauth:\n  token:\n    expiredRefreshRetryDelay: 0\n',
    );
    const listener = app(f);
    const down = await request(listener).get('/ready');
    expect({ status: down.status, body: down.body }).toEqual({
      status: 503,
      body: {
        status: 'DOWN',
        serviceId: 'com.networknt.apib-1.0.0',
        checks: [
          {
            name: 'token',
            status: 'DOWN',
            reason: 'ERR10009 CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
          },
        ],
      },
    });
    expect(down.text).not.toContain('api-b-secret');
    expect((await request(listener).get('/health')).status).toBe(200);

    // The token server answers: ready, with one token request, which the next call uses.
    tokenAnswer = (res) =>
      json(res, 200, {
        access_token: `own-token-${++issued}`,
        token_type: 'bearer',
        expires_in: 600,
      });
    const up = await request(listener).get('/ready');
    expect({ status: up.status, body: up.body }).toEqual({
      status: 200,
      body: { status: 'UP', serviceId: 'com.networknt.apib-1.0.0' },
    });
    expect((await request(listener).get('/ready')).status).toBe(200);
    const res = await request(listener).get('/v1/data').set('Authorization', `Bearer ${userToken}`);
    expect(res.status).toBe(200);
    expect(issued).toBe(1);
    expect(downstream.requests[0]['x-scope-token']).toBe('Bearer own-token-1');
  });

  it('api-d and security off are ready without a token server (no own token needed)', async () => {
    const open = createChainApp('B')(
      serviceConfig('api-b', { 'api_b.yml': files()['api_b.yml'] }),
      silentLogger(),
    ).listener;
    expect((await request(open).get('/ready')).status).toBe(200);
    const d = createChainApp('D')(
      serviceConfig('api-d', { 'security.yml': SECURITY_ON }),
      silentLogger(),
    ).listener;
    expect((await request(d).get('/ready')).body).toEqual({
      status: 'UP',
      serviceId: 'com.networknt.apid-1.0.0',
    });
    expect(tokenServer.requests).toHaveLength(0);
  });

  it('security off: no token is asked for and no credentials are sent', async () => {
    const f = files();
    delete (f as Record<string, string>)['security.yml'];
    const res = await request(app(f)).get('/v1/data');
    expect(res.status).toBe(200);
    expect(tokenServer.requests).toHaveLength(0);
    expect(downstream.requests[0].authorization).toBeUndefined();
    expect(downstream.requests[0]['x-scope-token']).toBeUndefined();
  });

  it('security on without the token settings stops the service at start, naming file and key', () => {
    const noServer = serviceConfig('api-b', files({ serverUrl: '' }));
    expect(() => createChainApp('B')(noServer, silentLogger())).toThrow(
      `Config error in ${noServer.loader.overrideDir}/client.yml at key "oauth.token.server_url": is required when security.yml enableVerifyJwt is true`,
    );
    const noGrant = serviceConfig('api-b', files({ cc: false }));
    expect(() => createChainApp('B')(noGrant, silentLogger())).toThrow(
      `at key "oauth.token.client_credentials": is required when security.yml enableVerifyJwt is true`,
    );
    const noSecret = serviceConfig('api-b', { ...files(), 'secret.yml': 'keyClientSecret: k\n' });
    expect(() => createChainApp('B')(noSecret, silentLogger())).toThrow(
      `Config error in ${noSecret.loader.overrideDir}/secret.yml at key "clientCredentialsClientSecret": is required when security.yml enableVerifyJwt is true`,
    );
  });
});
