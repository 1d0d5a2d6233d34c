import pino from 'pino';
import request from 'supertest';
import { mintToken, httpsStub, json, tokenEndpointStub, type Stub, CERTS } from '@chain/testkit';
import { createApp } from '../src/app.js';
import { serviceConfig } from '../../../test/support/service-config.js';
import { primary } from '../../../test/support/security-suite.js';
import { describeVerificationRules, securityOn } from '../../../test/support/verification-rules.js';

const DOWNSTREAM = ['API D: Message 1', 'API D: Message 2'];

let downstream: Stub;
let tokenServer: Stub;
beforeAll(async () => {
  downstream = await httpsStub((_req, res) => json(res, 200, DOWNSTREAM));
  tokenServer = await tokenEndpointStub(() =>
    mintToken(primary, { clientId: 'api-a-client', scope: ['api_b.r'] }),
  );
});
afterAll(async () => {
  await downstream.close();
  await tokenServer.close();
});

const clientYml = (keyServerUrl: string, keyExtra = '') => `tls:
  trustStore: ${CERTS}/ca.crt
request:
  timeout: 1000
oauth:
  token:
    server_url: ${tokenServer.url}
    client_credentials:
      uri: /oauth2/token
      client_id: api-a-client
  key:
    server_url: ${keyServerUrl}
    uri: /oauth2/key
    client_id: api-a-client
${keyExtra}`;

const build = (files: Record<string, string>, lines: string[] = []) =>
  createApp(
    serviceConfig('api-a', {
      'api_a.yml': `api_b_host: ${downstream.url}\napi_b_path: /v1/data\n`,
      ...files,
    }),
    pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
  ).listener;

describeVerificationRules({
  name: 'api-a',
  path: '/v1/data',
  required: ['api_a.r', 'api_a.w'],
  okBody: [...DOWNSTREAM, 'API A: Message 1', 'API A: Message 2'],
  keyClient: { id: 'api-a-client', secret: 'api-a-secret' },
  clientYml,
  createApp: build,
});

describe('api-a passThroughClaims', () => {
  it("passes the verified claims to the downstream as headers, replacing the caller's own", async () => {
    const app = build({
      'security.yml': securityOn({
        top: 'passThroughClaims:\n  client_id: X-Client-Id\n  user_id: X-User-Id\n  scope: X-Scopes\n',
      }),
      'client.yml': clientYml('https://localhost:1'),
    });
    const token = mintToken(primary, { scope: ['api_a.r'], clientId: 'caller', userId: 'u-7' });
    const before = downstream.requests.length;
    const res = await request(app)
      .get('/v1/data')
      .set('Authorization', `Bearer ${token}`)
      .set('X-User-Id', 'admin')
      .set('X-Client-Id', 'someone-else');
    expect(res.status).toBe(200);
    const seen = downstream.requests[before];
    expect({
      client: seen['x-client-id'],
      user: seen['x-user-id'],
      scopes: seen['x-scopes'],
    }).toEqual({ client: 'caller', user: 'u-7', scopes: 'api_a.r' });
    // credentials are never taken from a claim
    expect(seen.authorization).toBe(`Bearer ${token}`);
  });

  it("removes a caller's own pass-through headers on a skipped path too", async () => {
    const app = build({
      'security.yml': securityOn({
        top: "skipPathPrefixes: ['/v1']\npassThroughClaims:\n  user_id: X-User-Id\n",
      }),
      'client.yml': clientYml('https://localhost:1'),
    });
    const before = downstream.requests.length;
    const res = await request(app).get('/v1/data').set('X-User-Id', 'admin');
    expect(res.status).toBe(200);
    expect(downstream.requests[before]['x-user-id']).toBeUndefined();
  });
});
