import request from 'supertest';
import { createApp } from '../src/app.js';
import { serviceConfig, silentLogger } from '../../../test/support/service-config.js';
import { httpsStub, json, type Stub, CERTS } from '@chain/testkit';

const DOWNSTREAM = [
  'API D: Message 1',
  'API D: Message 2',
  'API C: Message 1',
  'API C: Message 2',
  'API B: Message 1',
  'API B: Message 2',
];

function appFor(url: string, timeout = 3000, tls = '') {
  return createApp(
    serviceConfig('api-a', {
      'api_a.yml': `api_b_host: ${url}\napi_b_path: /v1/data\n`,
      'client.yml': `tls:\n  trustStore: ${CERTS}/ca.crt\n${tls}request:\n  timeout: ${timeout}\n`,
    }),
    silentLogger(),
  ).listener;
}

describe('api-a', () => {
  let stub: Stub;
  let answer: (res: import('node:http').ServerResponse) => void;

  beforeAll(async () => {
    stub = await httpsStub((_req, res) => answer(res));
  });
  afterAll(() => stub.close());

  it('appends its messages after the downstream messages', async () => {
    answer = (res) => json(res, 200, DOWNSTREAM);
    const res = await request(appFor(stub.url)).get('/v1/data').set('X-Traceability-Id', 't-1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([...DOWNSTREAM, 'API A: Message 1', 'API A: Message 2']);
    const seen = stub.requests[stub.requests.length - 1];
    expect(seen['x-correlation-id']).toBe(res.headers['x-correlation-id']);
    expect(seen['x-traceability-id']).toBe('t-1');
    expect(res.headers['x-traceability-id']).toBe('t-1');
  });

  it('answers ERR20004 when the downstream body is not a JSON array of strings', async () => {
    for (const body of [{ a: 1 }, [1, 2], 'text']) {
      answer = (res) => json(res, 200, body);
      const res = await request(appFor(stub.url)).get('/v1/data');
      expect(res.status).toBe(502);
      expect(res.body).toEqual({
        statusCode: 502,
        code: 'ERR20004',
        message: 'DOWNSTREAM_BAD_RESPONSE',
        description: 'Downstream service api-b answered a body that is not a JSON array of strings',
      });
    }
  });

  it('answers ERR20004 with the downstream status when it fails', async () => {
    answer = (res) =>
      json(res, 401, { statusCode: 401, code: 'ERR10000', message: 'x', description: 'y' });
    const res = await request(appFor(stub.url)).get('/v1/data');
    expect(res.status).toBe(502);
    expect(res.body.description).toBe('Downstream service api-b answered HTTP 401 ERR10000');
  });

  it('passes on a downstream failure further down the chain unchanged', async () => {
    const far = {
      statusCode: 502,
      code: 'ERR20002',
      message: 'DOWNSTREAM_UNAVAILABLE',
      description: 'Downstream service api-d could not be reached',
    };
    answer = (res) => json(res, 502, far);
    const res = await request(appFor(stub.url)).get('/v1/data');
    expect(res.status).toBe(502);
    expect(res.body).toEqual(far);
  });

  it('answers ERR20003 when the downstream does not answer within the time-out', async () => {
    answer = () => undefined; // never answers
    const started = Date.now();
    const res = await request(appFor(stub.url, 300)).get('/v1/data');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(res.status).toBe(504);
    expect(res.body).toEqual({
      statusCode: 504,
      code: 'ERR20003',
      message: 'DOWNSTREAM_TIMEOUT',
      description: 'Downstream service api-b did not answer within 300 ms',
    });
  });

  it('answers ERR20002 when the downstream refuses the connection', async () => {
    const res = await request(appFor('https://localhost:1')).get('/v1/data');
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      statusCode: 502,
      code: 'ERR20002',
      message: 'DOWNSTREAM_UNAVAILABLE',
      description: 'Downstream service api-b could not be reached',
    });
  });

  describe('tls.verifyHostname', () => {
    // 127.0.0.2 is loopback too, but not a name of the dev server certificate.
    let other: Stub;
    beforeAll(async () => {
      other = await httpsStub((_req, res) => json(res, 200, []), { host: '127.0.0.2' });
    });
    afterAll(() => other.close());

    it('refuses a certificate that does not name the host when true (the default)', async () => {
      const res = await request(appFor(other.url)).get('/v1/data');
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('ERR20002');
    });

    it('accepts it when false, still checking the chain against the trust store', async () => {
      const res = await request(appFor(other.url, 3000, '  verifyHostname: false\n')).get(
        '/v1/data',
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual(['API A: Message 1', 'API A: Message 2']);
    });

    it('refuses an untrusted certificate even when false', async () => {
      const untrusted = createApp(
        serviceConfig('api-a', {
          'api_a.yml': `api_b_host: ${other.url}\napi_b_path: /v1/data\n`,
          'client.yml': `tls:\n  verifyHostname: false\n  loadTrustStore: false\n`,
        }),
        silentLogger(),
      ).listener;
      const res = await request(untrusted).get('/v1/data');
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('ERR20002');
    });
  });
});
