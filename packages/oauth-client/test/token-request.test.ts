import util from 'node:util';
import { EmbeddedJWK, jwtVerify } from 'jose';
import { freePort } from '@chain/testkit';
import { DpopKey, TokenFetchError } from '../src/index.js';
import { TokenRequester } from '../src/token-request.js';
import {
  closeClients,
  fakeJwt,
  httpsServer,
  send,
  testClient,
  type TestServer,
} from './support/https-server.js';

const SECRET = 'api-a-secret';
const NOW = 1_700_000_000_000;

let server: TestServer;
let answer: (res: import('node:http').ServerResponse) => void;
beforeAll(async () => {
  server = await httpsServer((_req, res) => answer(res));
});
afterAll(() => server.close());
afterEach(closeClients);
beforeEach(() => {
  server.seen.splice(0);
});

const requester = (overrides: Partial<ConstructorParameters<typeof TokenRequester>[0]> = {}) =>
  new TokenRequester({
    serverUrl: server.url + '/',
    uri: '/oauth2/token',
    clientId: 'api-a-client',
    authMethod: 'client_secret_basic',
    clientSecret: SECRET,
    timeoutMs: 1000,
    http: testClient(),
    now: () => NOW,
    ...overrides,
  });

/** Neither the message nor anything reachable from the error shows the secret. */
function expectNoSecret(err: unknown) {
  const text = util.inspect(err, { depth: 10, showHidden: true });
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(Buffer.from(`api-a-client:${SECRET}`).toString('base64'));
}

async function failure(p: Promise<unknown>): Promise<TokenFetchError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TokenFetchError);
  expectNoSecret(err);
  return err as TokenFetchError;
}

describe('TokenRequester', () => {
  it('client_credentials: form POST with Basic auth and the scope space-joined', async () => {
    answer = (res) =>
      send(res, 200, {
        access_token: 'jwt-1',
        token_type: 'bearer',
        expires_in: 600,
        scope: 'api_b.r api_b.w',
      });
    const token = await requester().request({
      grant_type: 'client_credentials',
      scope: ['api_b.r', 'api_b.w'],
    });
    expect(token).toEqual({
      value: 'jwt-1',
      expiresAt: NOW + 600_000,
      scope: ['api_b.r', 'api_b.w'],
    });
    const [req] = server.seen;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/oauth2/token');
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(req.headers.authorization).toBe(
      'Basic ' + Buffer.from('api-a-client:api-a-secret').toString('base64'),
    );
    expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'api_b.r api_b.w',
    });
  });

  it('client_credentials without scope sends none (the registered default applies)', async () => {
    answer = (res) =>
      send(res, 200, { access_token: 'jwt-2', token_type: 'bearer', expires_in: '60' });
    const token = await requester().request({ grant_type: 'client_credentials', scope: [] });
    expect(token).toEqual({ value: 'jwt-2', expiresAt: NOW + 60_000, scope: undefined });
    expect(server.seen[0].body).toBe('grant_type=client_credentials');
  });

  it('authorization_code: code and redirect_uri in the form', async () => {
    answer = (res) =>
      send(res, 200, { access_token: 'jwt-3', token_type: 'bearer', expires_in: 600 });
    await requester().request({
      grant_type: 'authorization_code',
      code: 'abc',
      redirect_uri: 'https://localhost:8080/authorization',
    });
    expect(Object.fromEntries(new URLSearchParams(server.seen[0].body))).toEqual({
      grant_type: 'authorization_code',
      code: 'abc',
      redirect_uri: 'https://localhost:8080/authorization',
    });
  });

  it.each([
    // light-oauth2 and oidc-provider always send expires_in; a JWT's own exp is not read.
    [
      'no expires_in, an exp in the JWT',
      { access_token: fakeJwt({ exp: NOW / 1000 + 300 }), token_type: 'bearer' },
      'no expires_in',
    ],
    [
      'expires_in 0',
      { access_token: 'opaque', token_type: 'bearer', expires_in: 0 },
      'no expires_in',
    ],
    [
      'expires_in not a number',
      { access_token: 'opaque', token_type: 'bearer', expires_in: 'soon' },
      '"response" body "expires_in" property must be a number',
    ],
    [
      'no access_token',
      { token_type: 'bearer', expires_in: 600 },
      '"response" body "access_token" property must be a string',
    ],
    // RFC 6749 5.1: token_type is required, and only Bearer and DPoP are known.
    [
      'no token_type',
      { access_token: 'opaque', expires_in: 600 },
      '"response" body "token_type" property must be a string',
    ],
    [
      'an unknown token_type',
      { access_token: 'opaque', token_type: 'mac', expires_in: 600 },
      'unsupported `token_type` value',
    ],
    ['not JSON', '<html>hello</html>', 'failed to parse "response" body as JSON'],
    ['no body', '', 'failed to parse "response" body as JSON'],
    ['a JSON array', [1, 2], '"response" body must be a top level object'],
  ])('a 200 with %s is bad_response', async (_what, body, cause) => {
    answer = (res) => send(res, 200, body);
    const err = await failure(requester().request({ grant_type: 'client_credentials' }));
    expect(err.code).toBe('bad_response');
    expect(err.status).toBe(200);
    expect((err.cause as Error).message).toBe(cause);
    expect(util.inspect(err, { depth: 10 })).not.toContain('opaque');
  });

  it('401 (wrong secret, unknown client) is unauthorized, with the server answer as cause', async () => {
    answer = (res) =>
      send(res, 401, {
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
    const err = await failure(requester().request({ grant_type: 'client_credentials' }));
    expect(err.code).toBe('unauthorized');
    expect(err.message).toBe(
      `Token for client api-a-client from ${server.url}/oauth2/token: the token server refused the client credentials (HTTP 401 invalid_client)`,
    );
    expect(err).toMatchObject({
      clientId: 'api-a-client',
      status: 401,
      oauthError: 'invalid_client',
    });
    expect(err.cause).toEqual({
      status: 401,
      error: 'invalid_client',
      description: 'client authentication failed',
    });
  });

  it("401 with oidc-provider's Basic challenge is unauthorized, the challenge's error its detail", async () => {
    answer = (res) => {
      res.setHeader(
        'WWW-Authenticate',
        'Basic realm="https://localhost:6882", error="invalid_client", error_description="client authentication failed"',
      );
      send(res, 401, {
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
    };
    const err = await failure(requester().request({ grant_type: 'client_credentials' }));
    expect(err).toMatchObject({ code: 'unauthorized', status: 401, oauthError: 'invalid_client' });
    expect(err.cause).toEqual({
      status: 401,
      error: 'invalid_client',
      description: 'client authentication failed',
    });
  });

  it('another error answer is rejected; a non-JSON error body is kept as no detail', async () => {
    answer = (res) => send(res, 400, { error: 'invalid_scope' });
    const err = await failure(requester().request({ grant_type: 'client_credentials' }));
    expect(err).toMatchObject({ code: 'rejected', status: 400, oauthError: 'invalid_scope' });
    answer = (res) => send(res, 503, 'Service Unavailable', 'text/plain');
    const err2 = await failure(requester().request({ grant_type: 'client_credentials' }));
    expect(err2).toMatchObject({ code: 'rejected', status: 503, oauthError: undefined });
    expect(err2.message).toMatch(/\(HTTP 503\)$/);
  });

  it('a 204 (no token, no body) is rejected', async () => {
    answer = (res) => {
      res.writeHead(204);
      res.end();
    };
    const err = await failure(requester().request({ grant_type: 'client_credentials' }));
    expect(err).toMatchObject({ code: 'rejected', status: 204, oauthError: undefined });
  });

  it('no answer within the time-out is timeout', async () => {
    answer = () => undefined; // never answers
    const started = Date.now();
    const err = await failure(
      requester({ timeoutMs: 200 }).request({ grant_type: 'client_credentials' }),
    );
    expect(err.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("a refused connection is unreachable, the cause being the transport's network failure", async () => {
    const port = await freePort();
    const err = await failure(
      requester({ serverUrl: `https://127.0.0.1:${port}` }).request({
        grant_type: 'client_credentials',
      }),
    );
    expect(err.code).toBe('unreachable');
    expect(err.cause).toMatchObject({ code: 'network', cause: { code: 'ECONNREFUSED' } });
    expect(err.message).toBe(
      `Token for client api-a-client from https://127.0.0.1:${port}/oauth2/token: the token server could not be reached`,
    );
  });

  it('an untrusted server certificate is unreachable', async () => {
    const untrusting = testClient({ tls: { loadTrustStore: false } });
    const err = await failure(
      requester({ http: untrusting }).request({ grant_type: 'client_credentials' }),
    );
    expect(err.code).toBe('unreachable');
    expect(err.cause).toMatchObject({
      code: 'network',
      cause: { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
    });
  });

  it('an answer larger than 64 KiB is bad_response, not read whole', async () => {
    answer = (res) => send(res, 200, { access_token: 'x'.repeat(70_000), expires_in: 600 });
    const err = await failure(requester().request({ grant_type: 'client_credentials' }));
    expect(err.code).toBe('bad_response');
    expect(err.cause).toMatchObject({ code: 'body_too_large' });
  });
});

describe('TokenRequester: sender-constrained tokens', () => {
  const payloadOf = (jwt: string) =>
    JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
  const dpopAnswer = (res: import('node:http').ServerResponse) =>
    send(res, 200, { access_token: 'jwt-dpop', token_type: 'DPoP', expires_in: 600 });

  it('tls_client_auth: client_id in the form, no Authorization header, no secret anywhere', async () => {
    answer = (res) =>
      send(res, 200, { access_token: 'jwt-1', token_type: 'Bearer', expires_in: 600 });
    const token = await requester({
      authMethod: 'tls_client_auth',
      clientSecret: undefined,
    }).request({
      grant_type: 'client_credentials',
      scope: ['api_b.r'],
    });
    expect(token.value).toBe('jwt-1');
    const [req] = server.seen;
    expect(req.headers.authorization).toBeUndefined();
    expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'api_b.r',
      client_id: 'api-a-client',
    });
  });

  it('DPoP: each request carries a new proof of the key (htm POST, htu the token endpoint, no ath)', async () => {
    answer = dpopAnswer;
    const key = new DpopKey();
    const r = requester({ dpop: key });
    const before = Math.floor(Date.now() / 1000);
    await r.request({ grant_type: 'client_credentials' });
    await r.request({ grant_type: 'client_credentials' });
    const after = Math.floor(Date.now() / 1000);
    const proofs = server.seen.map((req) => req.headers.dpop as string);
    const [first, second] = await Promise.all(
      proofs.map((p) => jwtVerify(p, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ['ES256'] })),
    );
    expect(first.protectedHeader).toEqual({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk });
    expect(first.payload).toEqual({
      htm: 'POST',
      htu: `${server.url}/oauth2/token`,
      iat: expect.any(Number),
      jti: expect.any(String),
    });
    expect(first.payload.iat).toBeGreaterThanOrEqual(before);
    expect(first.payload.iat).toBeLessThanOrEqual(after);
    expect(second.payload.jti).not.toBe(first.payload.jti);
    // The client is still authenticated as configured.
    expect(server.seen[0].headers.authorization).toMatch(/^Basic /);
  });

  it('DPoP: an answer that is not a DPoP-bound token is bad_response, never used', async () => {
    answer = (res) =>
      send(res, 200, { access_token: 'jwt-1', token_type: 'Bearer', expires_in: 600 });
    const err = await failure(
      requester({ dpop: new DpopKey() }).request({ grant_type: 'client_credentials' }),
    );
    expect(err.code).toBe('bad_response');
    expect((err.cause as Error).message).toBe(
      'token_type bearer, not DPoP: the token is not bound',
    );
    expect(util.inspect(err, { depth: 10 })).not.toContain('jwt-1');
  });

  it('DPoP: a server asking for its nonce (use_dpop_nonce) gets one more request with it, once', async () => {
    answer = (res) => {
      if (server.seen.length === 1) {
        res.setHeader('DPoP-Nonce', 'nonce-1');
        send(res, 400, { error: 'use_dpop_nonce', error_description: 'nonce is required' });
      } else dpopAnswer(res);
    };
    const token = await requester({ dpop: new DpopKey() }).request({
      grant_type: 'client_credentials',
    });
    expect(token.value).toBe('jwt-dpop');
    expect(server.seen.map((req) => payloadOf(req.headers.dpop as string).nonce)).toEqual([
      undefined,
      'nonce-1',
    ]);
  });

  it('DPoP: asked for a nonce twice, the second refusal is the error', async () => {
    answer = (res) => {
      res.setHeader('DPoP-Nonce', `nonce-${server.seen.length}`);
      send(res, 400, { error: 'use_dpop_nonce' });
    };
    const err = await failure(
      requester({ dpop: new DpopKey() }).request({ grant_type: 'client_credentials' }),
    );
    expect([err.code, err.oauthError, server.seen.length]).toEqual([
      'rejected',
      'use_dpop_nonce',
      2,
    ]);
  });

  it('without a DPoP key, a use_dpop_nonce answer is not retried', async () => {
    answer = (res) => {
      res.setHeader('DPoP-Nonce', 'nonce-1');
      send(res, 400, { error: 'use_dpop_nonce' });
    };
    const err = await failure(requester().request({ grant_type: 'client_credentials' }));
    expect([err.code, server.seen.length]).toEqual(['rejected', 1]);
    expect(server.seen[0].headers.dpop).toBeUndefined();
  });
});

describe('TokenFetchError', () => {
  it('describes a retry_later without URL or status', () => {
    const err = new TokenFetchError('retry_later', { clientId: 'c' });
    expect(err.message).toBe(
      'Token for client c: the last renewal failed; waiting for the retry delay',
    );
    expect(err.name).toBe('TokenFetchError');
  });
});
