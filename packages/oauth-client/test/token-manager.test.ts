import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { ConfigLoader } from '@chain/config';
import { StatusError } from '@chain/security';
import {
  clientConfigSchema,
  TokenFetchError,
  TokenManager,
  type ClientConfig,
  type SecretConfig,
} from '../src';
import { httpsServer, send, trustingAgent, type TestServer } from './support/https-server';

let server: TestServer;
let answer: (body: string, res: import('node:http').ServerResponse) => void;
beforeAll(async () => {
  server = await httpsServer((req, res) => answer(req.body, res));
});
afterAll(() => server.close());
beforeEach(() => server.seen.splice(0));

const okToken = (res: import('node:http').ServerResponse, n = server.seen.length) =>
  send(res, 200, { access_token: `jwt-${n}`, token_type: 'bearer', expires_in: 600 });

/** client.yml checked by the real loader (JSON is YAML). */
function clientConfig(token: Record<string, unknown>, timeout = 1000): ClientConfig {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-yml-'));
  const yml = {
    tls: { loadTrustStore: false },
    request: { timeout },
    oauth: { token: { server_url: server.url, ...token } },
  };
  fs.writeFileSync(path.join(dir, 'client.yml'), JSON.stringify(yml));
  return new ConfigLoader({ bundledDir: dir, overrideDir: '/nonexistent', env: {} }).load(
    'client',
    clientConfigSchema,
  );
}

const CC = { uri: '/oauth2/token', client_id: 'api-a-client', scope: ['api_b.r', 'api_b.w'] };
const SECRET: SecretConfig = { clientCredentialsClientSecret: 'api-a-secret' };

const manager = (client: ClientConfig, secret: SecretConfig = SECRET, now?: () => number) =>
  new TokenManager({ client, secret, httpsAgent: trustingAgent(), now });

describe('TokenManager', () => {
  it('500 concurrent calls on a cold cache send one request to a real token server', async () => {
    answer = (_body, res) => setTimeout(() => okToken(res), 20);
    const tokens = manager(clientConfig({ client_credentials: CC }));
    const got = await Promise.all(Array.from({ length: 500 }, () => tokens.clientCredentials()));
    expect(server.seen).toHaveLength(1);
    expect(new Set(got.map((t) => t.value))).toEqual(new Set(['jwt-1']));
    expect(server.seen[0].body).toBe('grant_type=client_credentials&scope=api_b.r+api_b.w');
  });

  it('one cache per scope set, whatever the order', async () => {
    answer = (_body, res) => okToken(res);
    const tokens = manager(clientConfig({ client_credentials: CC }));
    expect(tokens.hasClientCredentials).toBe(true);
    const a = await tokens.clientCredentials(['x', 'y']);
    const b = await tokens.clientCredentials(['y', 'x', 'y']);
    const c = await tokens.clientCredentials([]);
    expect(a).toBe(b);
    expect(c.value).not.toBe(a.value);
    expect(server.seen.map((r) => r.body)).toEqual([
      'grant_type=client_credentials&scope=x+y',
      'grant_type=client_credentials',
    ]);
  });

  it('renews as client.yml says (injected clock, its own delays)', async () => {
    let t = 0;
    answer = (_body, res) => okToken(res);
    const tokens = manager(
      clientConfig({
        client_credentials: CC,
        tokenRenewBeforeExpired: 1000,
        earlyRefreshRetryDelay: 10,
        expiredRefreshRetryDelay: 10,
      }),
      SECRET,
      () => t,
    );
    const first = await tokens.clientCredentials();
    t = 600_000 - 1001;
    await expect(tokens.clientCredentials()).resolves.toBe(first);
    t = 600_000 - 1000;
    await expect(tokens.clientCredentials()).resolves.toBe(first); // early: served, renewing
    const renewal = tokens.renewal();
    expect(renewal).toBeDefined();
    await renewal; // the background renewal, waited on as it settles
    expect(tokens.renewal()).toBeUndefined();
    const second = await tokens.clientCredentials();
    expect(second.value).toBe('jwt-2');
    expect(server.seen).toHaveLength(2);
  });

  it('clientCredentialsWithin: the token value, or ERR10009 keeping the cause', async () => {
    answer = (_body, res) => okToken(res);
    const ok = manager(clientConfig({ client_credentials: CC }));
    await expect(ok.clientCredentialsWithin(1000)).resolves.toBe('jwt-1');

    answer = (_body, res) => send(res, 401, { error: 'invalid_client' });
    const refused = manager(clientConfig({ client_credentials: CC }), {
      clientCredentialsClientSecret: 'wrong-secret',
    });
    const err = await refused.clientCredentialsWithin(1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).body).toEqual({
      statusCode: 408,
      code: 'ERR10009',
      message: 'CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
      description: 'Could not get client credentials token in client module',
    });
    expect((err as StatusError).cause).toBeInstanceOf(TokenFetchError);
    expect(((err as StatusError).cause as TokenFetchError).code).toBe('unauthorized');
    expect(util.inspect(err, { depth: 10 })).not.toContain('wrong-secret');
  });

  it('clientCredentialsWithin: a token server slower than the time-out gives ERR10009 in time', async () => {
    answer = () => undefined;
    const tokens = manager(clientConfig({ client_credentials: CC }, 5000));
    const started = Date.now();
    const err = await tokens.clientCredentialsWithin(150).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect((err as StatusError).code).toBe('ERR10009');
    expect(((err as StatusError).cause as Error).message).toBe('no token within 150 ms');
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(1000);
  });

  it('authorization code exchange: code, redirect_uri and scope from client.yml', async () => {
    answer = (_body, res) => okToken(res);
    const tokens = manager(
      clientConfig({
        authorization_code: {
          uri: '/oauth2/token',
          client_id: 'chain-user',
          redirect_uri: 'https://localhost:8080/authorization',
          scope: ['api_a.r'],
        },
      }),
      { authorizationCodeClientSecret: 'chain-user-secret' },
    );
    expect(tokens.hasClientCredentials).toBe(false);
    const user = await tokens.authorizationCode('the-code');
    await expect(user.get()).resolves.toBe('jwt-1');
    await tokens.authorizationCode('code-2', { redirectUri: 'https://other/cb' });
    expect(server.seen.map((r) => Object.fromEntries(new URLSearchParams(r.body)))).toEqual([
      {
        grant_type: 'authorization_code',
        code: 'the-code',
        redirect_uri: 'https://localhost:8080/authorization',
        scope: 'api_a.r',
      },
      {
        grant_type: 'authorization_code',
        code: 'code-2',
        redirect_uri: 'https://other/cb',
        scope: 'api_a.r',
      },
    ]);
    expect(server.seen[0].headers.authorization).toBe(
      'Basic ' + Buffer.from('chain-user:chain-user-secret').toString('base64'),
    );
  });

  it('misconfiguration throws a TypeError naming the key', () => {
    expect(() => manager(clientConfig({ client_credentials: CC }), {})).toThrow(
      new TypeError('secret.yml clientCredentialsClientSecret is required for api-a-client'),
    );
    const noServer = clientConfig({ client_credentials: CC });
    delete noServer.oauth.token.server_url;
    expect(() => manager(noServer)).toThrow(
      new TypeError('client.yml oauth.token.server_url is required'),
    );
    const none = manager(clientConfig({}));
    expect(() => none.clientCredentials()).toThrow(
      new TypeError('client.yml oauth.token.client_credentials is required'),
    );
    expect(() => none.authorizationCode('c')).toThrow(
      new TypeError('client.yml oauth.token.authorization_code is required'),
    );
  });

  it('reads the bundled client.yml of a chain service', () => {
    const loader = new ConfigLoader({
      bundledDir: path.resolve(__dirname, '../../../services/api-a/config'),
      overrideDir: '/nonexistent',
      env: {},
    });
    const client = loader.load('client', clientConfigSchema);
    expect(client.oauth.token).toMatchObject({
      tokenRenewBeforeExpired: 60000,
      expiredRefreshRetryDelay: 2000,
      earlyRefreshRetryDelay: 4000,
      client_credentials: CC,
    });
  });
});
