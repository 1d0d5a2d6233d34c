import pino from 'pino';
import { mintToken } from '@chain/testkit';
import { createApp } from '../src/app';
import { serviceConfig } from '../../../test/support/service-config';
import { httpsStub, json, type Stub } from '../../../test/support/https-stub';
import { CERTS } from '../../../test/support/service-process';
import { describeSecurity, primary } from '../../../test/support/security-suite';

const DOWNSTREAM = [
  'API D: Message 1',
  'API D: Message 2',
  'API C: Message 1',
  'API C: Message 2',
  'API B: Message 1',
  'API B: Message 2',
];

let downstream: Stub;
let tokenServer: Stub;
beforeAll(async () => {
  downstream = await httpsStub((_req, res) => json(res, 200, DOWNSTREAM));
  tokenServer = await httpsStub((_req, res) =>
    json(res, 200, {
      access_token: mintToken(primary, { clientId: 'api-a-client', scope: ['api_b.r', 'api_b.w'] }),
      token_type: 'bearer',
      expires_in: 600,
    }),
  );
});
afterAll(async () => {
  await downstream.close();
  await tokenServer.close();
});

const clientYml = (keyServerUrl: string) => `tls:
  trustStore: ${CERTS}/ca.crt
request:
  timeout: 1000
oauth:
  token:
    server_url: ${tokenServer.url}
    client_credentials:
      uri: /oauth2/token
      client_id: api-a-client
      scope:
        - api_b.r
        - api_b.w
  key:
    server_url: ${keyServerUrl}
    uri: /oauth2/key
    client_id: api-a-client
`;

describeSecurity('api-a', {
  path: '/v1/data',
  required: ['api_a.r', 'api_a.w'],
  okBody: [...DOWNSTREAM, 'API A: Message 1', 'API A: Message 2'],
  keyClient: { id: 'api-a-client', secret: 'api-a-secret' },
  createApp: ({ security, keyServerUrl }, lines) =>
    createApp(
      serviceConfig('api-a', {
        'security.yml': security,
        'client.yml': clientYml(keyServerUrl),
        'api_a.yml': `api_b_host: ${downstream.url}\napi_b_path: /v1/data\n`,
      }),
      pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
    ).listener,
});

describe('api-a security, downstream', () => {
  it("only verified requests reach the downstream, with the caller's token unchanged", () => {
    // Every request the suite above sent to B came after a verified token: each carries a
    // bearer Authorization signed by a key api-a trusts, and api-a's own token as X-Scope-Token.
    expect(downstream.requests.length).toBeGreaterThan(0);
    for (const headers of downstream.requests) {
      expect(headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      expect(headers['x-scope-token']).toMatch(/^Bearer /);
    }
  });
});
