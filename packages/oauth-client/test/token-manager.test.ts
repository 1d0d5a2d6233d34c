import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { ConfigLoader } from '@chain/config';
import { ConfigError, StatusError } from '@chain/errors';
import { EmbeddedJWK, jwtVerify } from 'jose';
import { freePort } from '@chain/testkit';
import {
  clientConfigSchema,
  DpopKey,
  TokenFetchError,
  TokenManager,
  type ClientConfig,
  type ClientEvents,
  type SecretConfig,
} from '../src/index.js';
import {
  closeClients,
  httpsServer,
  send,
  testClient,
  type TestServer,
} from './support/https-server.js';

let server: TestServer;
let answer: (body: string, res: import('node:http').ServerResponse) => void;
beforeAll(async () => {
  server = await httpsServer((req, res) => answer(req.body, res));
});
afterAll(() => server.close());
afterEach(closeClients);
beforeEach(() => {
  server.seen.splice(0);
});

const okToken = (res: import('node:http').ServerResponse, n = server.seen.length) =>
  send(res, 200, { access_token: `jwt-${n}`, token_type: 'bearer', expires_in: 600 });

/** client.yml checked by the real loader (JSON is YAML). */
function clientConfig(
  token: Record<string, unknown>,
  timeout = 1000,
  more: { oauth?: Record<string, unknown>; root?: Record<string, unknown> } = {},
): ClientConfig {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-yml-'));
  const yml = {
    tls: { loadTrustStore: false },
    request: { timeout },
    oauth: { token: { server_url: server.url, ...token }, ...more.oauth },
    ...more.root,
  };
  fs.writeFileSync(path.join(dir, 'client.yml'), JSON.stringify(yml));
  return new ConfigLoader({ bundledDir: dir, overrideDir: '/nonexistent', env: {} }).load(
    'client',
    clientConfigSchema,
  );
}

const CC = { uri: '/oauth2/token', client_id: 'api-a-client', scope: ['api_b.r', 'api_b.w'] };
const SECRET: SecretConfig = { clientCredentialsClientSecret: 'api-a-secret' };

const manager = (
  client: ClientConfig,
  secret: SecretConfig = SECRET,
  now?: () => number,
  events?: ClientEvents,
) => new TokenManager({ client, secret, http: testClient(), now, events });

/** The next renewal's end, told by the events (what a test waits on, not a timer). */
function renewals() {
  let next: () => void = () => undefined;
  const events: ClientEvents = { tokenRenewed: () => next() };
  return { events, renewed: () => new Promise<void>((resolve) => (next = resolve)) };
}

describe('TokenManager', () => {
  it('500 concurrent calls on a cold cache send one request to a real token server', async () => {
    answer = (_body, res) => setTimeout(() => okToken(res), 20);
    const tokens = manager(clientConfig({ client_credentials: CC }));
    const own = tokens.forService(undefined);
    const got = await Promise.all(Array.from({ length: 500 }, () => own.get()));
    expect(server.seen).toHaveLength(1);
    expect(new Set(got)).toEqual(new Set(['jwt-1']));
    expect(server.seen[0].body).toBe('grant_type=client_credentials&scope=api_b.r+api_b.w');
  });

  it("client.yml's scope sorted and once each; none configured: no scope", async () => {
    answer = (_body, res) => okToken(res);
    const scoped = { ...CC, scope: ['y', 'x', 'y'] };
    await manager(clientConfig({ client_credentials: scoped }))
      .forService(undefined)
      .get();
    const unscoped = { ...CC, scope: undefined };
    await manager(clientConfig({ client_credentials: unscoped }))
      .forService(undefined)
      .get();
    expect(server.seen.map((r) => r.body)).toEqual([
      'grant_type=client_credentials&scope=x+y',
      'grant_type=client_credentials',
    ]);
  });

  it('renews as client.yml says (injected clock, its own delays)', async () => {
    let t = 0;
    answer = (_body, res) => okToken(res);
    const { events, renewed } = renewals();
    const tokens = manager(
      clientConfig({
        client_credentials: CC,
        tokenRenewBeforeExpired: 1000,
        earlyRefreshRetryDelay: 10,
        expiredRefreshRetryDelay: 10,
      }),
      SECRET,
      () => t,
      events,
    );
    const own = tokens.forService(undefined);
    const first = await own.get();
    t = 600_000 - 1001;
    await expect(own.get()).resolves.toBe(first);
    t = 600_000 - 1000;
    const background = renewed();
    await expect(own.get()).resolves.toBe(first); // early: served, renewing
    await background;
    await expect(own.get()).resolves.toBe('jwt-2');
    expect(server.seen).toHaveLength(2);
  });

  it('the own token of the downstream calls: its value, or ERR10009 keeping the cause', async () => {
    answer = (_body, res) => okToken(res);
    const ok = manager(clientConfig({ client_credentials: CC }));
    await expect(ok.forService(undefined).get()).resolves.toBe('jwt-1');

    answer = (_body, res) => send(res, 401, { error: 'invalid_client' });
    const refused = manager(clientConfig({ client_credentials: CC }), {
      clientCredentialsClientSecret: 'wrong-secret',
    });
    const err = await refused
      .forService(undefined)
      .get()
      .catch((e: unknown) => e);
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

  it('a token server slower than request.timeout gives ERR10009 within it, to every caller waiting', async () => {
    answer = () => undefined;
    const source = manager(clientConfig({ client_credentials: CC }, 150)).forService(undefined);
    const started = Date.now();
    const first = source.get().catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const late = await source.get().catch((e: unknown) => e);
    const took = Date.now() - started;
    for (const err of [await first, late]) {
      expect((err as StatusError).code).toBe('ERR10009');
      expect(((err as StatusError).cause as TokenFetchError).code).toBe('timeout');
    }
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(1000);
    expect(server.seen).toHaveLength(1);
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

  it('a grant that cannot be asked for is a ConfigError naming the file and key', async () => {
    const files = { clientFile: '/cfg/client.yml', secretFile: '/cfg/secret.yml' };
    const made =
      (client: ClientConfig, secret: SecretConfig = SECRET) =>
      () =>
        new TokenManager({ client, secret, ...files, http: testClient() });
    expect(made(clientConfig({ client_credentials: CC }), {})).toThrow(
      new ConfigError(
        '/cfg/secret.yml',
        'clientCredentialsClientSecret',
        'is required for the client_credentials grant',
      ),
    );
    const noServer = clientConfig({ client_credentials: CC });
    delete noServer.oauth.token.server_url;
    expect(made(noServer)).toThrow(
      'Config error in /cfg/client.yml at key "oauth.token.server_url": is required for the client_credentials grant',
    );
    // client.yml's client_secret (light-4j) does when secret.yml has none.
    const inClientYml = clientConfig({ client_credentials: { ...CC, client_secret: 's' } });
    expect(made(inClientYml, {})).not.toThrow();
    const none = made(clientConfig({}))();
    expect(() => none.forService(undefined)).toThrow(
      'at key "oauth.token.client_credentials": is required for the client_credentials grant',
    );
    await expect(none.authorizationCode('c')).rejects.toThrow(
      'at key "oauth.token.authorization_code": is required for the authorization_code grant',
    );
    // The refresh grant without a client of its own goes as the code's client.
    expect(() => none.userToken({ value: 'v', expiresAt: 0, refreshToken: 'r' })).toThrow(
      'at key "oauth.token.authorization_code": is required for the refresh_token grant',
    );
  });

  it('reads the bundled client.yml of a chain service', () => {
    const loader = new ConfigLoader({
      bundledDir: path.resolve(import.meta.dirname, '../../../services/api-a/config'),
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

describe('TokenManager: sender-constrained own tokens', () => {
  const KEY_STORE = path.resolve(import.meta.dirname, '../../../certs/clients/api-a.pem');
  const withKeyStore = {
    root: { tls: { loadTrustStore: false, loadKeyStore: true, keyStore: KEY_STORE } },
  };

  it('tokenBinding dpop: one key for the service, every own-token request with a proof, the source bound to it', async () => {
    answer = (_body, res) =>
      send(res, 200, {
        access_token: `jwt-${server.seen.length}`,
        token_type: 'DPoP',
        expires_in: 600,
      });
    const m = manager(clientConfig({ client_credentials: { ...CC, tokenBinding: 'dpop' } }));
    expect(m.dpopKey).toBeInstanceOf(DpopKey);
    const source = m.forService(undefined);
    expect(source.dpop).toBe(m.dpopKey);
    await expect(source.get()).resolves.toBe('jwt-1');
    source.invalidate('jwt-1');
    await expect(source.get()).resolves.toBe('jwt-2');
    const proofs = await Promise.all(
      server.seen.map((r) => jwtVerify(r.headers.dpop as string, EmbeddedJWK)),
    );
    expect(proofs.map((p) => p.protectedHeader.jwk)).toEqual([m.dpopKey!.jwk, m.dpopKey!.jwk]);
    expect(proofs.map((p) => p.payload.htu)).toEqual(Array(2).fill(`${server.url}/oauth2/token`));
  });

  it('users’ tokens are not bound: the code exchange sends no proof', async () => {
    answer = (_body, res) =>
      send(res, 200, {
        access_token: 'user-1',
        token_type: 'bearer',
        expires_in: 600,
        refresh_token: 'r',
      });
    const m = manager(
      clientConfig({
        client_credentials: { ...CC, tokenBinding: 'dpop' },
        authorization_code: {
          uri: '/oauth2/token',
          client_id: 'web',
          redirect_uri: 'https://x/cb',
        },
      }),
      { ...SECRET, authorizationCodeClientSecret: 'web-secret' },
    );
    await m.authorizationCode('code-1');
    expect(server.seen[0].headers.dpop).toBeUndefined();
  });

  it('without tokenBinding: no key, no proof', async () => {
    answer = (_body, res) => okToken(res);
    const m = manager(clientConfig({ client_credentials: CC }));
    expect(m.dpopKey).toBeUndefined();
    expect(m.forService(undefined).dpop).toBeUndefined();
    await m.forService(undefined).get();
    expect(server.seen[0].headers.dpop).toBeUndefined();
  });

  it('tls_client_auth: no secret needed; client_id in the form, no Authorization header', async () => {
    answer = (_body, res) => okToken(res);
    const client = clientConfig(
      {
        client_credentials: {
          ...CC,
          tokenBinding: 'mtls',
          token_endpoint_auth_method: 'tls_client_auth',
        },
      },
      1000,
      withKeyStore,
    );
    const m = manager(client, {});
    await expect(m.forService(undefined).get()).resolves.toBe('jwt-1');
    const [req] = server.seen;
    expect(req.headers.authorization).toBeUndefined();
    expect(new URLSearchParams(req.body).get('client_id')).toBe('api-a-client');
    expect(req.headers.dpop).toBeUndefined();
  });
});

describe('TokenManager: a user token from the code exchange, renewed by refresh without the user', () => {
  const AC = {
    uri: '/oauth2/token',
    client_id: 'chain-user',
    redirect_uri: 'https://localhost:3000/authorization',
  };
  const USER_SECRET: SecretConfig = { authorizationCodeClientSecret: 'chain-user-secret' };
  const form = (r: { body: string }) => Object.fromEntries(new URLSearchParams(r.body));
  const basic = (id: string, secret: string) =>
    'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');

  /** A token server that issues user-N and rotates the refresh token rt-N each time. */
  const rotating = (_body: string, res: import('node:http').ServerResponse) => {
    const n = server.seen.length;
    send(res, 200, {
      access_token: `user-${n}`,
      token_type: 'Bearer',
      expires_in: 600,
      refresh_token: `rt-${n}`,
    });
  };

  it('renews in the window in the background, and once expired for the waiting caller; the refresh token rotates', async () => {
    let t = 0;
    answer = rotating;
    const { events, renewed } = renewals();
    const tokens = manager(
      clientConfig({
        authorization_code: AC,
        tokenRenewBeforeExpired: 1000,
        earlyRefreshRetryDelay: 10,
        expiredRefreshRetryDelay: 10,
      }),
      USER_SECRET,
      () => t,
      events,
    );
    const user = await tokens.authorizationCode('the-code', { codeVerifier: 'v'.repeat(43) });
    expect(user.state()).toBe('fresh');
    await expect(user.get()).resolves.toBe('user-1');
    t = 600_000 - 1000; // the renewal window: served, renewed behind
    const background = renewed();
    await expect(user.get()).resolves.toBe('user-1');
    await background;
    await expect(user.get()).resolves.toBe('user-2');
    t = 10_000_000; // expired: the caller waits for the refresh
    expect(user.state()).toBe('expired');
    await expect(user.get()).resolves.toBe('user-3');
    expect(server.seen.map(form)).toEqual([
      {
        grant_type: 'authorization_code',
        code: 'the-code',
        redirect_uri: AC.redirect_uri,
        code_verifier: 'v'.repeat(43),
      },
      { grant_type: 'refresh_token', refresh_token: 'rt-1' },
      { grant_type: 'refresh_token', refresh_token: 'rt-2' },
    ]);
    // The refresh goes as the client the code was issued to.
    expect(server.seen.map((r) => r.headers.authorization)).toEqual(
      Array(3).fill(basic('chain-user', 'chain-user-secret')),
    );
    // The refreshed token lives from its request on.
    expect(user.state(10_000_000 + 600_000 - 1)).toBe('early');
    expect(user.state(10_000_000 + 600_000)).toBe('expired');
  });

  it('client.yml refresh_token: its own client, uri and scope (secret.yml refreshTokenClientSecret)', async () => {
    answer = rotating;
    const tokens = manager(
      clientConfig({
        authorization_code: AC,
        refresh_token: { uri: '/oauth2/refresh', client_id: 'refresher', scope: ['api_a.r'] },
        tokenRenewBeforeExpired: 0,
      }),
      { ...USER_SECRET, refreshTokenClientSecret: 'refresher-secret' },
    );
    const user = tokens.userToken({
      value: 'from-elsewhere',
      expiresAt: 0,
      refreshToken: 'rt-x',
    });
    await expect(user.get()).resolves.toBe('user-1');
    expect(server.seen[0].url).toBe('/oauth2/refresh');
    expect(form(server.seen[0])).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'rt-x',
      scope: 'api_a.r',
    });
    expect(server.seen[0].headers.authorization).toBe(basic('refresher', 'refresher-secret'));
  });

  it('bad inputs are typed errors holding no code, token, refresh token or secret', async () => {
    const tokens = manager(clientConfig({ authorization_code: AC }), USER_SECRET);
    const secrets = ['chain-user-secret', 'wrong-code-42', 'rt-secret-7', 'user-access-9'];
    const noSecret = (err: unknown) => {
      const text = `${String(err)} ${util.inspect(err, { depth: 10 })} ${JSON.stringify(err)}`;
      for (const s of secrets) expect(text).not.toContain(s);
    };
    // A wrong, used or expired code, or another redirect URI: the server's invalid_grant.
    answer = (_b, res) =>
      send(res, 400, { error: 'invalid_grant', error_description: 'grant request is invalid' });
    const wrong = await tokens.authorizationCode('wrong-code-42').catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(TokenFetchError);
    expect(wrong).toMatchObject({
      code: 'invalid_grant',
      status: 400,
      oauthError: 'invalid_grant',
    });
    expect((wrong as Error).message).toBe(
      `Token for client chain-user from ${server.url}/oauth2/token: the token server refused the code or refresh token (wrong, used or expired) (HTTP 400 invalid_grant)`,
    );
    noSecret(wrong);
    // An expired refresh token: the user must sign in again.
    const user = tokens.userToken({
      value: 'user-access-9',
      expiresAt: 0,
      refreshToken: 'rt-secret-7',
    });
    const expired = await user.get().catch((e: unknown) => e);
    expect(expired).toMatchObject({ code: 'invalid_grant' });
    noSecret(expired);
    // A token server that is down.
    const down = clientConfig({ authorization_code: AC });
    down.oauth.token.server_url = `https://127.0.0.1:${await freePort()}`;
    const unreachable = await manager(down, USER_SECRET)
      .authorizationCode('wrong-code-42')
      .catch((e: unknown) => e);
    expect(unreachable).toMatchObject({ code: 'unreachable' });
    noSecret(unreachable);
    // A token issued without a refresh token cannot be renewed without the user.
    const once = tokens.userToken({ value: 'user-access-9', expiresAt: 0 });
    await expect(once.get()).rejects.toMatchObject({
      code: 'invalid_grant',
      cause: new Error('the token server issued no refresh token'),
    });
  });
});

describe('TokenManager: multipleAuthServers', () => {
  let second: TestServer;
  beforeAll(async () => {
    second = await httpsServer((_req, res) =>
      send(res, 200, {
        access_token: `second-${second.seen.length}`,
        token_type: 'bearer',
        expires_in: 600,
      }),
    );
  });
  afterAll(() => second.close());

  const multiple = () =>
    clientConfig(
      {
        client_credentials: {
          uri: '/oauth2/token',
          serviceIdAuthServers: {
            'com.networknt.petstore-1.0.0': {
              server_url: second.url,
              client_id: 'petstore-caller',
              client_secret: 'petstore-caller-secret',
              scope: ['read:pets'],
            },
            'com.networknt.apid-1.0.0': {
              client_id: 'apid-caller',
              client_secret: 'apid-caller-secret',
              scope: 'api_d.r',
              uri: '/token/v2',
            },
          },
        },
      },
      1000,
      {
        oauth: { multipleAuthServers: true },
        root: {
          pathPrefixServices: '/v2/pet=com.networknt.petstore-1.0.0&/v1=com.networknt.apid-1.0.0',
        },
      },
    );

  it('each serviceId: its own token server, client, scope and cache; chosen by pathPrefixServices', async () => {
    answer = (_b, res) => okToken(res);
    second.seen.splice(0);
    const client = multiple();
    expect(client.pathPrefixServices).toEqual({
      '/v2/pet': 'com.networknt.petstore-1.0.0',
      '/v1': 'com.networknt.apid-1.0.0',
    });
    const tokens = manager(client, {});
    expect(tokens.serviceIdFor('/v2/pet/1')).toBe('com.networknt.petstore-1.0.0');
    expect(tokens.serviceIdFor('/v2/pets')).toBeUndefined(); // whole segments only
    expect(tokens.serviceIdFor('/v1/data')).toBe('com.networknt.apid-1.0.0');
    const pets = tokens.forService('com.networknt.petstore-1.0.0');
    const apid = tokens.forService('com.networknt.apid-1.0.0');
    expect(tokens.forService('com.networknt.petstore-1.0.0')).toBe(pets);
    for (let i = 0; i < 3; i++) {
      await expect(pets.get()).resolves.toBe('second-1');
      await expect(apid.get()).resolves.toBe('jwt-1');
    }
    expect(second.seen).toHaveLength(1);
    expect(server.seen).toHaveLength(1);
    expect(second.seen[0].body).toBe('grant_type=client_credentials&scope=read%3Apets');
    expect(second.seen[0].headers.authorization).toBe(
      'Basic ' + Buffer.from('petstore-caller:petstore-caller-secret').toString('base64'),
    );
    expect(server.seen[0].url).toBe('/token/v2');
    expect(server.seen[0].body).toBe('grant_type=client_credentials&scope=api_d.r');
    expect(() => tokens.forService('com.networknt.other-1.0.0')).toThrow(
      new ConfigError(
        'client.yml',
        'oauth.token.client_credentials.serviceIdAuthServers',
        'has no entry for serviceId com.networknt.other-1.0.0',
      ),
    );
    expect(() => tokens.forService(undefined)).toThrow(/no serviceId: see pathPrefixServices/);
  });

  it('without multipleAuthServers every downstream gets the one client_credentials token', async () => {
    answer = (_b, res) => okToken(res);
    const tokens = manager(clientConfig({ client_credentials: CC }));
    expect(tokens.forService('anything')).toBe(tokens.forService(undefined));
    expect(tokens.serviceIdFor('/v1/data')).toBeUndefined();
  });
});

describe('TokenManager: token exchange (RFC 8693, oauth.token.token_exchange)', () => {
  const TE = { client_id: 'api-a-client', audience: 'api-b', scope: ['api_b.r'] };
  const SECRETS: SecretConfig = { ...SECRET, tokenExchangeClientSecret: 'api-a-exchange' };
  const form = (subject: string) =>
    'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange' +
    `&subject_token=${subject}&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Ajwt` +
    '&audience=api-b&scope=api_b.r';

  it('one request per subject token however many calls wait on it; each subject its own token', async () => {
    answer = (body, res) => {
      const subject = new URLSearchParams(body).get('subject_token');
      const token = { access_token: `for-${subject}`, token_type: 'bearer', expires_in: 600 };
      setTimeout(() => send(res, 200, token), 20);
    };
    const tokens = manager(clientConfig({ client_credentials: CC, token_exchange: TE }), SECRETS);
    const got = await Promise.all(
      Array.from({ length: 100 }, (_, i) => tokens.forSubject(i % 2 ? 'user-1' : 'user-2').get()),
    );
    expect(got.slice(0, 2)).toEqual(['for-user-2', 'for-user-1']);
    expect(new Set(got)).toEqual(new Set(['for-user-1', 'for-user-2']));
    expect(server.seen.map((r) => r.body).sort()).toEqual([form('user-1'), form('user-2')]);
    expect(server.seen[0].headers.authorization).toBe(
      `Basic ${Buffer.from('api-a-client:api-a-exchange').toString('base64')}`,
    );
    // Cached: the same subject again asks nothing.
    expect(await tokens.forSubject('user-1').get()).toBe(got[1]);
    expect(server.seen).toHaveLength(2);
  });

  it('renewed like the own tokens: inside the window in the background, the current one still served', async () => {
    let t = 0;
    answer = (_body, res) => okToken(res);
    const { events, renewed } = renewals();
    const tokens = manager(
      clientConfig({ client_credentials: CC, token_exchange: TE }),
      SECRETS,
      () => t,
      events,
    );
    const first = renewed();
    expect(await tokens.forSubject('user').get()).toBe('jwt-1');
    await first;
    t = 600_000 - 60_000; // tokenRenewBeforeExpired's window
    const second = renewed();
    expect(await tokens.forSubject('user').get()).toBe('jwt-1');
    await second;
    expect(await tokens.forSubject('user').get()).toBe('jwt-2');
  });

  it('a refused exchange is ERR10009 for the caller', async () => {
    answer = (_body, res) =>
      send(res, 400, { error: 'invalid_target', error_description: 'not this audience' });
    const tokens = manager(clientConfig({ client_credentials: CC, token_exchange: TE }), SECRETS);
    const err = await tokens
      .forSubject('user')
      .get()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe('ERR10009');
    expect(((err as StatusError).cause as TokenFetchError).code).toBe('rejected');
  });

  it('its secret missing: a start-up error naming secret.yml tokenExchangeClientSecret', () => {
    const client = clientConfig({ client_credentials: CC, token_exchange: TE });
    expect(() => manager(client, SECRET)).toThrow(
      new ConfigError(
        'secret.yml',
        'tokenExchangeClientSecret',
        'is required for the token_exchange grant',
      ),
    );
  });

  it('without audience (light-4j’s section as it ships) it is off: nothing asked at start', () => {
    const client = clientConfig({ client_credentials: CC, token_exchange: { client_id: 'x' } });
    expect(() => manager(client, SECRET)).not.toThrow();
  });
});
