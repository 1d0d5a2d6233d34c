import type http from 'node:http';
import pino from 'pino';
import { mintToken, httpsStub, json, tokenEndpointStub, type Stub, CERTS } from '@chain/testkit';
import { createApp } from '../src/app.js';
import { serviceConfig } from '../../../test/support/service-config.js';
import { describeSecurity, primary } from '../../../test/support/security-suite.js';

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
  tokenServer = await tokenEndpointStub(() => ownToken);
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

/** Every answer api-a gave in the suite below: the caller's Authorization and the status. */
const answered: { authorization?: string; status: number }[] = [];
const recording =
  (listener: http.RequestListener): http.RequestListener =>
  (req, res) => {
    res.once('finish', () =>
      answered.push({ authorization: req.headers.authorization, status: res.statusCode }),
    );
    listener(req, res);
  };
const ownToken = mintToken(primary, { clientId: 'api-a-client', scope: ['api_b.r', 'api_b.w'] });

describeSecurity('api-a', {
  path: '/v1/data',
  required: ['api_a.r', 'api_a.w'],
  okBody: [...DOWNSTREAM, 'API A: Message 1', 'API A: Message 2'],
  keyClient: { id: 'api-a-client', secret: 'api-a-secret' },
  createApp: ({ security, keyServerUrl }, lines) =>
    recording(
      createApp(
        serviceConfig('api-a', {
          'security.yml': security,
          'client.yml': clientYml(keyServerUrl),
          'api_a.yml': `api_b_host: ${downstream.url}\napi_b_path: /v1/data\n`,
        }),
        pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
      ).listener,
    ),
});

describe('api-a security, downstream', () => {
  it("only verified requests reach the downstream, with the caller's token unchanged", () => {
    // Every request api-a answered 200 went downstream once, with the caller's Authorization as
    // sent and api-a's own token as X-Scope-Token; no refused request (401, 403, 404, 405, 503)
    // went downstream at all.
    const verified = answered.filter((a) => a.status === 200);
    expect(verified.length).toBeGreaterThan(10);
    expect(answered.filter((a) => a.status !== 200).length).toBeGreaterThan(1000);
    expect(downstream.requests.map((h) => h.authorization).sort()).toEqual(
      verified.map((a) => a.authorization).sort(),
    );
    for (const headers of downstream.requests) {
      expect(headers['x-scope-token']).toBe(`Bearer ${ownToken}`);
    }
  });
});
