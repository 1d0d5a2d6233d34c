import request from 'supertest';
import { createApp } from '../src/app.js';
import { serviceConfig, silentLogger } from '../../../test/support/service-config.js';
import { httpsStub, json, type Stub, CERTS } from '@chain/testkit';

describe('api-c', () => {
  let stub: Stub;
  beforeAll(async () => {
    stub = await httpsStub((req, res) =>
      req.url === '/v1/data'
        ? json(res, 200, ['API D: Message 1', 'API D: Message 2'])
        : json(res, 404, {}),
    );
  });
  afterAll(() => stub.close());

  it('calls api_d_host + api_d_path from api_c.yml and appends its own messages', async () => {
    const config = serviceConfig('api-c', {
      'api_c.yml': `api_d_host: ${stub.url}/\napi_d_path: /v1/data\n`,
      'client.yml': `tls:\n  trustStore: ${CERTS}/ca.crt\n`,
    });
    const res = await request(createApp(config, silentLogger()).listener).get('/v1/data');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      'API D: Message 1',
      'API D: Message 2',
      'API C: Message 1',
      'API C: Message 2',
    ]);
    expect(stub.requests).toHaveLength(1);
  });

  it('refuses a downstream host that is not a URL, naming file and key', () => {
    const config = serviceConfig('api-c', {
      'api_c.yml': 'api_d_host: not-a-url\napi_d_path: /v1/data\n',
    });
    expect(() => createApp(config, silentLogger())).toThrow(
      `Config error in ${config.loader.overrideDir}/api_c.yml at key "api_d_host": Invalid URL`,
    );
  });
});
