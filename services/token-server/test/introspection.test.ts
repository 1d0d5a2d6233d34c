import {
  configDir,
  httpsRequest,
  startExpectingFailure,
  startTokenServer,
  tokenServerYml,
  type TokenServerProcess,
} from '@chain/testkit';

// Runs the built server (dist/): `pnpm build` first, as for the e2e tests.
const REDIRECT = 'https://localhost:3000/authorization';
const CLIENTS = `clients:
  opaque-app:
    secret: opaque-secret
    scope: [api_a.r, read:pets]
    accessTokenFormat: opaque
  opaque-web:
    secret: opaque-web-secret
    scope: [api_a.r]
    redirectUri: ${REDIRECT}
    accessTokenFormat: opaque
  jwt-app:
    secret: jwt-secret
    scope: [api_a.r]
  resource-server:
    secret: rs-secret
`;
const USERS = 'users:\n  alice: { password: alice-password }\n';
const basic = (id: string, secret: string) =>
  'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');
const RS = basic('resource-server', 'rs-secret');

describe('introspection, revocation and opaque tokens (a real process over HTTPS)', () => {
  let ts: TokenServerProcess;
  beforeAll(async () => {
    ts = await startTokenServer({
      yml: tokenServerYml('tokenLifetimeSeconds: 300\n'),
      files: { 'clients.yml': CLIENTS, 'users.yml': USERS },
    });
  });
  afterAll(async () => {
    expect(await ts.stop()).toBe(0);
  });

  const post = (path: string, auth: string | undefined, form: Record<string, string>) =>
    httpsRequest(`${ts.tokenUrl}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        ...(auth ? { Authorization: auth } : {}),
      },
      body: new URLSearchParams(form).toString(),
    });
  /** Every token issued here, to check the log holds none. */
  const issued: string[] = [];
  const token = async (id: string, secret: string) => {
    const answer = await post('/oauth2/token', basic(id, secret), {
      grant_type: 'client_credentials',
    });
    expect(answer.status).toBe(200);
    const body = answer.body as { access_token: string; expires_in: number; token_type: string };
    issued.push(body.access_token);
    return body;
  };
  const introspect = (t: string, auth = RS) =>
    post('/oauth2/introspection', auth, { token: t, token_type_hint: 'access_token' });
  const INACTIVE = { status: 200, body: { active: false } };
  /** alice's tokens for opaque-web by the code grant: an opaque access token and a refresh token. */
  const aliceTokens = async () => {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: 'opaque-web',
      redirect_uri: REDIRECT,
    });
    const redirect = await httpsRequest(`${ts.tokenUrl}/oauth2/code?${query}`, {
      headers: { Authorization: basic('alice', 'alice-password') },
    });
    const code = new URL(redirect.headers.location as string).searchParams.get('code')!;
    const exchange = await post('/oauth2/token', basic('opaque-web', 'opaque-web-secret'), {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
    });
    return exchange;
  };
  const of = (a: { status: number; body: unknown }) => ({ status: a.status, body: a.body });

  it('a client configured for opaque tokens gets one: not a JWT, introspection tells its claims', async () => {
    const answered = await token('opaque-app', 'opaque-secret');
    expect(answered).toEqual({
      access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expires_in: 300,
      token_type: 'Bearer',
      scope: 'api_a.r read:pets',
    });
    const answer = await introspect(answered.access_token);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-store');
    const now = Math.floor(Date.now() / 1000);
    expect(of(answer)).toEqual({
      status: 200,
      body: {
        active: true,
        client_id: 'opaque-app',
        exp: expect.any(Number),
        iat: expect.any(Number),
        iss: 'https://localhost:6882',
        aud: 'urn:chain:api',
        scope: 'api_a.r read:pets',
        token_type: 'Bearer',
      },
    });
    const { exp, iat } = answer.body as { exp: number; iat: number };
    expect(exp - iat).toBe(300);
    expect(Math.abs(iat - now)).toBeLessThanOrEqual(2);
  });

  it("a user's opaque token (code grant) tells the user: sub and light-oauth2's user_id", async () => {
    const exchange = await aliceTokens();
    const { access_token } = exchange.body as { access_token: string };
    issued.push(access_token);
    expect(access_token).not.toContain('.');
    expect((await introspect(access_token)).body).toMatchObject({
      active: true,
      client_id: 'opaque-web',
      sub: 'alice',
      user_id: 'alice',
      scope: 'api_a.r',
    });
  });

  it('a JWT, a made-up token and a revoked token are inactive: {"active":false}', async () => {
    const jwt = (await token('jwt-app', 'jwt-secret')).access_token;
    expect(jwt.split('.')).toHaveLength(3);
    expect(of(await introspect(jwt))).toEqual(INACTIVE);
    expect(of(await introspect('made-up-token'))).toEqual(INACTIVE);

    const opaque = (await token('opaque-app', 'opaque-secret')).access_token;
    // Only the client a token was issued to may revoke it (RFC 7009 2.1, oidc-provider's rule).
    const foreign = await post('/oauth2/revocation', RS, { token: opaque });
    expect(of(foreign)).toEqual({
      status: 400,
      body: {
        error: 'invalid_request',
        error_description: 'client is not authorized to revoke the presented token',
      },
    });
    expect((await introspect(opaque)).body).toMatchObject({ active: true });
    const revoked = await post('/oauth2/revocation', basic('opaque-app', 'opaque-secret'), {
      token: opaque,
      token_type_hint: 'access_token',
    });
    expect({ status: revoked.status, text: revoked.text }).toEqual({ status: 200, text: '' });
    expect(of(await introspect(opaque))).toEqual(INACTIVE);
  });

  it("introspection authenticates the asking client as the token endpoint does; oidc-provider's error answers", async () => {
    const opaque = (await token('opaque-app', 'opaque-secret')).access_token;
    const wrong = await introspect(opaque, basic('resource-server', 'not-the-secret'));
    expect(of(wrong)).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'client authentication failed' },
    });
    expect(wrong.headers['www-authenticate']).toBe(
      'Basic realm="https://localhost:6882", error="invalid_client", error_description="client authentication failed"',
    );
    expect(of(await post('/oauth2/introspection', undefined, { token: opaque }))).toEqual({
      status: 400,
      body: {
        error: 'invalid_request',
        error_description: 'no client authentication mechanism provided',
      },
    });
    expect(of(await post('/oauth2/introspection', RS, {}))).toEqual({
      status: 400,
      body: { error: 'invalid_request', error_description: "missing required parameter 'token'" },
    });
  });

  it('counts introspections by the client that asked and logs each one, never the token', async () => {
    const stats = (await httpsRequest(`${ts.tokenUrl}/stats`)).body as {
      introspectionRequests: Record<string, number>;
    };
    // 1 + 1 + 4 (a JWT, a made-up token, before and after the revocation) + 2 (the wrong
    // secret, under the client it named, and no token); without credentials: unknown.
    expect(stats.introspectionRequests).toEqual({ 'resource-server': 8, unknown: 1 });
    // A line reaches the test when the server's logger writes its buffer: wait for all of them.
    const count = (msg: string) => ts.lines.filter((l) => l.includes(`"msg":"${msg}"`)).length;
    await ts.waitForLine(() => count('token introspected') >= 9 && count('token revocation') >= 2);
    const lines = ts.lines
      .filter((l) => l.includes('"msg":"token introspected"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({
      clientId: 'resource-server',
      status: 200,
      active: true,
      tokenClientId: 'opaque-app',
    });
    expect(lines).toHaveLength(9);
    expect(lines.filter((l) => l.status === 401)).toHaveLength(1);
    expect(count('token revocation')).toBe(2);
    const log = ts.lines.join('\n');
    expect(issued.length).toBeGreaterThan(3);
    for (const t of issued) expect(log).not.toContain(t);
  });

  it('a refresh token introspects only for the client it was issued to, and says it is one', async () => {
    const exchange = await aliceTokens();
    const { refresh_token, access_token } = exchange.body as Record<string, string>;
    expect(refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    issued.push(refresh_token, access_token);
    // another client (a resource server) learns nothing of it, whatever the hint
    for (const hint of ['access_token', 'refresh_token']) {
      const answer = await post('/oauth2/introspection', RS, {
        token: refresh_token,
        token_type_hint: hint,
      });
      expect(of(answer)).toEqual(INACTIVE);
    }
    const own = await post('/oauth2/introspection', basic('opaque-web', 'opaque-web-secret'), {
      token: refresh_token,
    });
    expect(of(own)).toEqual({
      status: 200,
      body: {
        active: true,
        sub: 'alice',
        client_id: 'opaque-web',
        exp: expect.any(Number),
        iat: expect.any(Number),
        iss: 'https://localhost:6882',
        scope: 'api_a.r',
        token_type: 'refresh_token',
      },
    });
    // the access token of the same grant is still a Bearer token to the resource server
    expect((await introspect(access_token)).body).toMatchObject({
      active: true,
      token_type: 'Bearer',
    });
  });
});

describe('clients.yml accessTokenFormat', () => {
  it('anything but jwt or opaque stops the server with the file and key named', async () => {
    const dir = configDir({
      'token-server.yml': tokenServerYml(),
      'clients.yml': 'clients:\n  c:\n    secret: s\n    accessTokenFormat: paseto\n',
    });
    const { code, stderr } = await startExpectingFailure('token-server', dir);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Cannot start: Config error in ${dir}/clients.yml at key "clients.c.accessTokenFormat": Invalid option: expected one of "jwt"|"opaque"\n`,
    );
  });
});
