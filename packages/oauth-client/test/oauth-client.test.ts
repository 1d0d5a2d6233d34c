import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, StatusError } from '@chain/errors';
import { CERTS } from '@chain/testkit';
import { createOAuthClient, type OAuthClient } from '../src/index.js';
import { httpsServer, send, type TestServer } from './support/https-server.js';

// The facade as a user outside the repository calls it: client.yml (a file or its keys) in, an
// own token and downstream calls out, over a real HTTPS token endpoint and downstream.

let server: TestServer;
let downstreamAnswer: (res: http.ServerResponse) => void;
const issued: Record<string, number> = {};
beforeAll(async () => {
  server = await httpsServer((req, res) => {
    if (req.method === 'POST') {
      const basic = String(req.headers.authorization).replace(/^Basic /, '');
      const [client] = Buffer.from(basic, 'base64').toString().split(':');
      issued[client] = (issued[client] ?? 0) + 1;
      const token = `jwt-${client}-${issued[client]}`;
      return send(res, 200, { access_token: token, token_type: 'bearer', expires_in: 600 });
    }
    downstreamAnswer(res);
  });
});
afterAll(() => server.close());
const clients: OAuthClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  server.seen.splice(0);
  for (const key of Object.keys(issued)) delete issued[key];
});
beforeEach(() => {
  downstreamAnswer = (res) => send(res, 200, { messages: ['downstream'] });
});

const keys = (token: Record<string, unknown> = {}, root: Record<string, unknown> = {}) => ({
  tls: { trustStore: path.join(CERTS, 'ca.crt') },
  oauth: {
    token: {
      server_url: server.url,
      client_credentials: { uri: '/oauth2/token', client_id: 'example-client', scope: ['b.r'] },
      ...token,
    },
  },
  ...root,
});
const made = (client: OAuthClient) => (clients.push(client), client);
const gets = () => server.seen.filter((r) => r.method === 'GET');

describe('createOAuthClient', () => {
  it('from a client.yml path with secret.yml beside it: one cached token, calls that carry it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oauth-client-'));
    fs.writeFileSync(path.join(dir, 'client.yml'), JSON.stringify(keys()));
    fs.writeFileSync(path.join(dir, 'secret.yml'), 'clientCredentialsClientSecret: s3cret\n');
    const client = made(createOAuthClient({ config: path.join(dir, 'client.yml') }));

    expect(await client.token()).toBe('jwt-example-client-1');
    expect(await client.token()).toBe('jwt-example-client-1');
    expect(server.seen.map((r) => [r.method, r.url, r.headers.authorization])).toEqual([
      ['POST', '/oauth2/token', `Basic ${Buffer.from('example-client:s3cret').toString('base64')}`],
    ]);
    expect(server.seen[0].body).toBe('grant_type=client_credentials&scope=b.r');

    const answer = await client.call(`${server.url}/v1/data?x=1`);
    expect(answer).toEqual({ status: 200, body: { messages: ['downstream'] } });
    const [sent] = gets();
    expect(sent.url).toBe('/v1/data?x=1');
    expect(sent.headers.authorization).toBe('Bearer jwt-example-client-1');
    expect(sent.headers['x-scope-token']).toBeUndefined();
    expect(sent.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent.headers.accept).toBe('application/json');
    expect(client.config.oauth.token.server_url).toBe(server.url);
  });

  it('from keys and secrets: the caller token passed on, the own one as X-Scope-Token, the ids given', async () => {
    const client = made(
      createOAuthClient({ config: keys(), secrets: { clientCredentialsClientSecret: 's' } }),
    );
    await client.call(new URL(`${server.url}/v1/data`), {
      authorization: 'Bearer caller-token',
      correlationId: 'corr-1',
      traceabilityId: 'trace-1',
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    const [sent] = gets();
    expect(sent.headers).toMatchObject({
      authorization: 'Bearer caller-token',
      'x-scope-token': 'Bearer jwt-example-client-1',
      'x-correlation-id': 'corr-1',
      'x-traceability-id': 'trace-1',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
  });

  it('refused config: a missing secret names secret.yml, an unknown key the closest; warnings logged', () => {
    expect(() => createOAuthClient({ config: keys() })).toThrow(
      new ConfigError(
        'secret.yml',
        'clientCredentialsClientSecret',
        'is required for the client_credentials grant',
      ),
    );
    expect(() => createOAuthClient({ config: { ...keys(), tsl: {} } })).toThrow(
      new ConfigError('client.yml', 'tsl', 'unknown key; did you mean "tls"?'),
    );
    const warnings: string[] = [];
    const logger = { warn: (_fields: object, message: string) => warnings.push(message) };
    const config = keys({}, { request: { connectionPoolSize: 10 } });
    made(createOAuthClient({ config, secrets: { clientCredentialsClientSecret: 's' }, logger }));
    expect(warnings).toEqual([
      'client.yml key "request.connectionPoolSize": light-4j key not supported here; ignored (one connection pool per origin)',
    ]);
  });

  it('a refusal of the downstream is a StatusError naming it; one breaker per origin, at most 256 kept', async () => {
    const config = keys({}, { request: { errorThreshold: 1, resetTimeout: 60000 } });
    const secrets = { clientCredentialsClientSecret: 's' };
    const client = made(createOAuthClient({ config, secrets }));
    downstreamAnswer = (res) => send(res, 404, { code: 'ERR10008' });
    const host = new URL(server.url).host;
    await expect(client.call(`${server.url}/v1/none`)).rejects.toMatchObject({
      code: 'ERR20004',
      body: { description: `Downstream service ${host} answered HTTP 404 ERR10008` },
    });
    // A closed port: no answer, the breaker of that origin opens (errorThreshold 1).
    const closed = 'https://127.0.0.1:1';
    const codeOf = (url: string) =>
      client.call(url).then(
        () => 'answered',
        (err: StatusError) => err.code,
      );
    expect([await codeOf(closed), await codeOf(closed)]).toEqual(['ERR20002', 'ERR20011']);
    const others = new Set<string>();
    for (let n = 2; n <= 257; n++) others.add(await codeOf(`https://127.0.${n >> 8}.${n & 255}:1`));
    expect([...others]).toEqual(['ERR20002']);
    // Forgotten with the others once 256 origins were kept: a new breaker tries again.
    expect(await codeOf(closed)).toBe('ERR20002');
  });

  it('with multipleAuthServers: the token of the path prefix service', async () => {
    const server_ = (id: string) => ({ client_id: id, client_secret: `${id}-secret`, scope: [] });
    const config = keys(
      {
        client_credentials: {
          uri: '/oauth2/token',
          serviceIdAuthServers: { b: server_('b-client'), c: server_('c-client') },
        },
      },
      { pathPrefixServices: { '/b': 'b', '/c': 'c' } },
    );
    config.oauth = { ...config.oauth, multipleAuthServers: true } as typeof config.oauth;
    const client = made(createOAuthClient({ config }));
    await client.call(`${server.url}/c/data`);
    expect(gets()[0].headers.authorization).toBe('Bearer jwt-c-client-1');
    expect(await client.token('/b/x')).toBe('jwt-b-client-1');
    await expect(client.token()).rejects.toThrow(ConfigError);
  });
});
