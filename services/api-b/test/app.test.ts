import request from 'supertest';
import { createApp } from '../src/app.js';
import { serviceConfig, silentLogger } from '../../../test/support/service-config.js';
import { httpsStub, json, type Stub, CERTS } from '@chain/testkit';

describe('api-b', () => {
  let stub: Stub;
  beforeAll(async () => {
    stub = await httpsStub((req, res) =>
      req.url === '/v1/data'
        ? json(res, 200, ['API C: Message 1', 'API C: Message 2'])
        : json(res, 404, {}),
    );
  });
  afterAll(() => stub.close());

  it('calls api_c_host + api_c_path from api_b.yml and appends its own messages', async () => {
    const config = serviceConfig('api-b', {
      'api_b.yml': `api_c_host: ${stub.url}/\napi_c_path: /v1/data\n`,
      'client.yml': `tls:\n  trustStore: ${CERTS}/ca.crt\n`,
    });
    const res = await request(createApp(config, silentLogger()).listener).get('/v1/data');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      'API C: Message 1',
      'API C: Message 2',
      'API B: Message 1',
      'API B: Message 2',
    ]);
    expect(stub.requests).toHaveLength(1);
  });

  it('refuses a downstream host that is not a URL, naming file and key', () => {
    const config = serviceConfig('api-b', {
      'api_b.yml': 'api_c_host: not-a-url\napi_c_path: /v1/data\n',
    });
    expect(() => createApp(config, silentLogger())).toThrow(
      `Config error in ${config.loader.overrideDir}/api_b.yml at key "api_c_host": Invalid URL`,
    );
  });
});
