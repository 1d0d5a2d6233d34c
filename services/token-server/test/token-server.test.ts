import { createHash, createVerify } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import {
  createSigningKey,
  CERTS,
  configDir,
  startExpectingFailure,
  claimsOf,
  startTokenServer,
  tokenRequestCounts,
  tokenServerYml,
  type TokenServerProcess,
  httpsRequest,
} from '@chain/testkit';

// Runs the built server (dist/): `pnpm build` first, as for the e2e tests.
const basic = (id: string, secret: string) =>
  'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');

const tokenRequest = (
  ts: TokenServerProcess,
  auth: string | undefined,
  form: Record<string, string>,
) =>
  httpsRequest(`${ts.tokenUrl}/oauth2/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      ...(auth ? { Authorization: auth } : {}),
    },
    body: new URLSearchParams(form).toString(),
  });

function verifiesWith(jwt: string, certFile: string): boolean {
  const [h, p, s] = jwt.split('.');
  return createVerify('RSA-SHA256')
    .update(`${h}.${p}`)
    .verify(fs.readFileSync(certFile), Buffer.from(s, 'base64url'));
}

describe('token server (a real process over HTTPS)', () => {
  let ts: TokenServerProcess;
  beforeAll(async () => {
    ts = await startTokenServer({ yml: tokenServerYml('tokenLifetimeSeconds: 300\n') });
  });
  afterAll(async () => {
    expect(await ts.stop()).toBe(0);
  });

  it('client credentials: an RS256 JWT signed with the primary key, kid 100, client_id and scope', async () => {
    const before = Math.floor(Date.now() / 1000);
    const answer = await tokenRequest(ts, basic('api-a-client', 'api-a-secret'), {
      grant_type: 'client_credentials',
      scope: 'api_b.r api_b.w',
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    const body = answer.body as Record<string, unknown>;
    expect(body).toEqual({
      access_token: expect.any(String),
      expires_in: 300,
      token_type: 'Bearer',
      scope: 'api_b.r api_b.w',
    });
    const jwt = body.access_token as string;
    expect(JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString())).toMatchObject({
      alg: 'RS256',
      kid: '100',
    });
    expect(verifiesWith(jwt, path.join(CERTS, 'primary.crt'))).toBe(true);
    expect(verifiesWith(jwt, path.join(CERTS, 'secondary.crt'))).toBe(false);
    const claims = claimsOf(jwt);
    expect(claims).toMatchObject({
      client_id: 'api-a-client',
      scope: 'api_b.r api_b.w',
      iss: 'https://localhost:6882',
      aud: 'urn:chain:api',
    });
    expect(claims.exp).toBe((claims.iat as number) + 300);
    expect(claims.iat as number).toBeGreaterThanOrEqual(before);
  });

  it('writes only JSON lines: the library’s notices become log lines, nothing goes to stderr', async () => {
    const notice = await ts.waitForLine((l) => l.includes('"source":"oidc-provider"'));
    expect(JSON.parse(notice)).toMatchObject({
      service: 'token-server',
      source: 'oidc-provider',
      msg: expect.stringMatching(/^already parsed request body detected/),
    });
    for (const line of ts.lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(ts.stderr()).toBe('');
  });

  it('no scope asked: the client gets its registered scopes (light-oauth2 default)', async () => {
    const answer = await tokenRequest(ts, basic('chain-user', 'chain-user-secret'), {
      grant_type: 'client_credentials',
    });
    expect(answer.status).toBe(200);
    expect(claimsOf((answer.body as { access_token: string }).access_token).scope).toBe(
      'api_a.r api_a.w read:pets write:pets',
    );
  });

  it.each([
    ['a wrong secret', basic('api-a-client', 'not-the-secret')],
    ['an unknown client', basic('nobody', 'x')],
  ])('%s is refused with 401 invalid_client', async (_what, auth) => {
    const answer = await tokenRequest(ts, auth, { grant_type: 'client_credentials' });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ error: 'invalid_client' });
    expect(answer.text).not.toContain('not-the-secret');
  });

  it('no credentials at all is 400 invalid_request', async () => {
    const answer = await tokenRequest(ts, undefined, { grant_type: 'client_credentials' });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'invalid_request' });
  });

  it('a scope the client may not ask for is refused with 400 invalid_scope', async () => {
    const answer = await tokenRequest(ts, basic('api-a-client', 'api-a-secret'), {
      grant_type: 'client_credentials',
      scope: 'api_c.r',
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: 'invalid_scope',
      error_description: 'requested scope is not allowed',
      scope: 'api_c.r',
    });
  });

  it("key server: answers as light-oauth2's key service does", async () => {
    const auth = { Authorization: basic('api-b-client', 'api-b-secret') };
    const pem = await httpsRequest(`${ts.keyUrl}/oauth2/key/101`, { headers: auth });
    expect(pem.status).toBe(200);
    expect(pem.headers['content-type']).toBe('application/text');
    expect(pem.text).toBe(fs.readFileSync(path.join(CERTS, 'secondary.crt'), 'utf8'));

    const status = (statusCode: number, code: string, message: string, description: string) => ({
      statusCode,
      code,
      message,
      description,
      severity: 'ERROR',
    });
    const answers = [
      [undefined, '100'],
      [{ Authorization: basic('api-b-client', 'api-a-secret') }, '100'],
      [{ Authorization: basic('nobody', 'x') }, '100'],
      [auth, '999'],
      [auth, 'made-up-kid'],
    ] as const;
    const got = await Promise.all(
      answers.map(([headers, kid]) => httpsRequest(`${ts.keyUrl}/oauth2/key/${kid}`, { headers })),
    );
    expect(got.map((a) => [a.status, a.headers['content-type'], a.body])).toEqual([
      [
        401,
        'application/json',
        status(
          401,
          'ERR12002',
          'MISSING_AUTHORIZATION_HEADER',
          'No authorization header is found in the request.',
        ),
      ],
      [
        401,
        'application/json',
        status(
          401,
          'ERR12007',
          'UNAUTHORIZED_CLIENT',
          'Unauthorized client with wrong client secret.',
        ),
      ],
      [
        404,
        'application/json',
        status(404, 'ERR12014', 'CLIENT_NOT_FOUND', 'Client nobody is not found.'),
      ],
      [400, 'application/json', status(400, 'ERR12030', 'INVALID_KEY_ID', 'Invalid key id 999.')],
      [
        404,
        'application/json',
        status(
          404,
          'ERR12017',
          'KEY_NOT_FOUND',
          'Public key certificate keyId made-up-kid is not found.',
        ),
      ],
    ]);
    const post = await httpsRequest(`${ts.keyUrl}/oauth2/key/100`, {
      method: 'POST',
      headers: auth,
    });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET');
  });

  it('key server: a JWKS with both public keys', async () => {
    const answer = await httpsRequest(`${ts.keyUrl}/oauth2/jwks`);
    expect(answer.status).toBe(200);
    const { keys } = answer.body as { keys: Record<string, unknown>[] };
    expect(keys.map((k) => [k.kid, k.kty, k.alg, k.use])).toEqual([
      ['100', 'RSA', 'RS256', 'sig'],
      ['101', 'RSA', 'RS256', 'sig'],
    ]);
    expect(keys.every((k) => k.d === undefined)).toBe(true);
  });

  it('health on both ports; unknown paths are 404', async () => {
    expect((await httpsRequest(`${ts.tokenUrl}/health`)).body).toEqual({
      status: 'UP',
      serviceId: 'oauth2-token',
    });
    expect((await httpsRequest(`${ts.keyUrl}/health`)).body).toEqual({
      status: 'UP',
      serviceId: 'oauth2-key',
    });
    expect((await httpsRequest(`${ts.keyUrl}/nothing`)).status).toBe(404);
  });

  it('counts the key requests, and the most in one second', async () => {
    const stats = (await httpsRequest(`${ts.tokenUrl}/stats`)).body as Record<string, number>;
    // 1 + 5 + 1 (POST) by kid, and one JWKS
    expect(stats.keyRequests).toBe(8);
    expect(stats.keyRequestsPeakPerSecond).toBeGreaterThanOrEqual(1);
    expect(stats.keyRequestsPeakPerSecond).toBeLessThanOrEqual(8);
  });

  it('counts token requests per client (refused ones too) and logs no secret or token', async () => {
    const counts = await tokenRequestCounts(ts.tokenUrl);
    expect(counts).toEqual({
      'api-a-client': 3, // granted, wrong secret, invalid scope
      'chain-user': 1,
      nobody: 1,
      unknown: 1,
    });
    const log = ts.lines.join('\n');
    for (const secret of ['api-a-secret', 'chain-user-secret', 'not-the-secret']) {
      expect(log).not.toContain(secret);
    }
    expect(log).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
  });
});

describe('token server key rotation (SIGHUP)', () => {
  it('starts signing with a new kid and stops serving a retired one, without a restart', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-rotation-'));
    const next = createSigningKey('102');
    fs.writeFileSync(
      path.join(dir, 'next.key'),
      next.privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    fs.writeFileSync(path.join(dir, 'next.crt'), next.certificatePem);
    const yml = (signing: string, certificates: string) =>
      tokenServerYml()
        .replace(/signing:\n {2}kid: '100'\n {2}keyFile: .*\n/, signing)
        .replace(/certificates:\n( {2}.*\n)+/, certificates);
    fs.writeFileSync(path.join(dir, 'token-server.yml'), tokenServerYml());
    const ts = await startTokenServer({ dir });
    try {
      const kidOf = async () => {
        const answer = await tokenRequest(ts, basic('api-a-client', 'api-a-secret'), {
          grant_type: 'client_credentials',
        });
        const jwt = (answer.body as { access_token: string }).access_token;
        return JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString()).kid as string;
      };
      const keyStatus = async (kid: string) =>
        (
          await httpsRequest(`${ts.keyUrl}/oauth2/key/${kid}`, {
            headers: { Authorization: basic('api-a-client', 'api-a-secret') },
          })
        ).status;
      expect(await kidOf()).toBe('100');
      expect(await keyStatus('102')).toBe(400);

      // publish 102 and sign with it; 100 is still served
      fs.writeFileSync(
        path.join(dir, 'token-server.yml'),
        yml(
          `signing:\n  kid: '102'\n  keyFile: ${dir}/next.key\n`,
          `certificates:\n  '100': ${CERTS}/primary.crt\n  '102': ${dir}/next.crt\n`,
        ),
      );
      ts.child.kill('SIGHUP');
      await ts.waitForLine((l) => /reloaded: signing and serving keys/.test(l));
      expect(await kidOf()).toBe('102');
      expect([await keyStatus('100'), await keyStatus('102')]).toEqual([200, 200]);

      // retire 100
      fs.writeFileSync(
        path.join(dir, 'token-server.yml'),
        yml(
          `signing:\n  kid: '102'\n  keyFile: ${dir}/next.key\n`,
          `certificates:\n  '102': ${dir}/next.crt\n`,
        ),
      );
      ts.child.kill('SIGHUP');
      await ts.waitForLine((l) => /"kids":\["102"\]/.test(l));
      expect([await keyStatus('100'), await keyStatus('102')]).toEqual([400, 200]);

      // a bad file keeps the running configuration
      fs.writeFileSync(path.join(dir, 'token-server.yml'), 'tokenPort: [\n');
      ts.child.kill('SIGHUP');
      await ts.waitForLine((l) => /reload failed; the running configuration is kept/.test(l));
      expect(await kidOf()).toBe('102');
    } finally {
      expect(await ts.stop()).toBe(0);
    }
  });
});

describe('token server start', () => {
  it('a bad config file stops it with the file and key named', async () => {
    const dir = configDir({ 'token-server.yml': tokenServerYml('tokenLifetimeSeconds: soon\n') });
    const { code, stderr } = await startExpectingFailure('token-server', dir);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Cannot start: Config error in ${dir}/token-server.yml at key "tokenLifetimeSeconds": expected number, received string\n`,
    );
  });
});

describe('authorization code and refresh token grants (a real process over HTTPS)', () => {
  const REDIRECT = 'https://localhost:3000/authorization';
  const CLIENTS = `clients:
  web-client:
    secret: web-secret
    scope: [api_a.r, api_a.w]
    redirectUri: [${REDIRECT}, https://localhost:3000/other]
  other-web:
    secret: other-secret
    scope: [api_a.r]
    redirectUri: ${REDIRECT}
  service-only:
    secret: service-secret
    scope: [api_a.r]
`;
  const USERS = 'users:\n  alice:\n    password: alice-password\n';
  let ts: TokenServerProcess;
  beforeAll(async () => {
    ts = await startTokenServer({
      yml: tokenServerYml('codeLifetimeSeconds: 2\nrefreshTokenLifetimeSeconds: 3\n'),
      files: { 'clients.yml': CLIENTS, 'users.yml': USERS },
    });
  });
  afterAll(async () => {
    expect(await ts.stop()).toBe(0);
  });

  const ALICE = basic('alice', 'alice-password');
  const code = (query: Record<string, string>, auth: string | null = ALICE, method = 'GET') =>
    httpsRequest(`${ts.tokenUrl}/oauth2/code?${new URLSearchParams(query)}`, {
      method,
      headers: auth ? { Authorization: auth } : {},
    });
  const ask = (extra: Record<string, string> = {}) =>
    code({ response_type: 'code', client_id: 'web-client', redirect_uri: REDIRECT, ...extra });
  /** The redirect's parameters, checked to go to `redirectUri`. */
  const redirected = (
    answer: { status: number; headers: Record<string, unknown> },
    to = REDIRECT,
  ) => {
    expect(answer.status).toBe(302);
    expect(answer.headers['cache-control']).toBe('no-store');
    const location = new URL(answer.headers.location as string);
    expect(location.origin + location.pathname).toBe(to);
    return Object.fromEntries(location.searchParams);
  };
  const exchange = (
    c: string,
    redirectUri = REDIRECT,
    auth = basic('web-client', 'web-secret'),
    extra = {},
  ) =>
    tokenRequest(ts, auth, {
      grant_type: 'authorization_code',
      code: c,
      redirect_uri: redirectUri,
      ...extra,
    });
  const refresh = (rt: string, auth = basic('web-client', 'web-secret')) =>
    tokenRequest(ts, auth, { grant_type: 'refresh_token', refresh_token: rt });
  const invalidGrant = { error: 'invalid_grant', error_description: 'grant request is invalid' };
  /**
   * Resolves past an expiry the token server logged, not after a guessed sleep: a second after
   * it, as a token's `exp` is in whole seconds and a timer may fire a millisecond early.
   */
  const at = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t + 1000 - Date.now())));
  const lineOf = async (msg: string, nth: number) => {
    await ts.waitForLine(() => ts.lines.filter((l) => l.includes(`"msg":"${msg}"`)).length >= nth);
    return JSON.parse(ts.lines.filter((l) => l.includes(`"msg":"${msg}"`))[nth - 1]) as Record<
      string,
      unknown
    >;
  };

  it("code, then token: a user token carrying user_id, a refresh token, the code's scope, the state back", async () => {
    const params = redirected(await ask({ scope: 'api_a.r', state: 'xyz 1' }));
    expect(Object.keys(params)).toEqual(['code', 'state']);
    expect(params.state).toBe('xyz 1');
    const answer = await exchange(params.code);
    expect(answer.status).toBe(200);
    const body = answer.body as Record<string, string>;
    expect(body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      expires_in: 600,
      scope: 'api_a.r',
      token_type: 'Bearer',
    });
    expect(verifiesWith(body.access_token, path.join(CERTS, 'primary.crt'))).toBe(true);
    expect(claimsOf(body.access_token)).toMatchObject({
      user_id: 'alice',
      sub: 'alice',
      client_id: 'web-client',
      scope: 'api_a.r',
      aud: 'urn:chain:api',
      iss: 'https://localhost:6882',
    });
    // No scope asked: the client's registered scopes.
    const all = await exchange(redirected(await ask()).code);
    expect(claimsOf((all.body as Record<string, string>).access_token).scope).toBe(
      'api_a.r api_a.w',
    );
  });

  it('a code is single-use: reused, it is refused and what it gave is revoked', async () => {
    const c = redirected(await ask()).code;
    const first = (await exchange(c)).body as Record<string, string>;
    const again = await exchange(c);
    expect({ status: again.status, body: again.body }).toEqual({ status: 400, body: invalidGrant });
    // RFC 6749 4.1.2: the refresh token issued from a reused code no longer works.
    const revoked = await refresh(first.refresh_token);
    expect({ status: revoked.status, body: revoked.body }).toEqual({
      status: 400,
      body: invalidGrant,
    });
  });

  it('a code is bound to its client and redirect URI; a wrong or made-up code is refused', async () => {
    const c = redirected(await ask()).code;
    for (const wrong of [
      exchange(c, 'https://localhost:3000/other'),
      exchange(c, REDIRECT, basic('other-web', 'other-secret')),
      exchange('not-a-code'),
      exchange(''.padEnd(43, 'A')),
    ]) {
      const answer = await wrong;
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 400,
        body: invalidGrant,
      });
    }
    // The refusals above did not use the code up for its own client and URI.
    expect((await exchange(c)).status).toBe(200);
    const badClient = await exchange(c, REDIRECT, basic('web-client', 'wrong'));
    expect(badClient.status).toBe(401);
    expect((badClient.body as Record<string, string>).error).toBe('invalid_client');
  });

  it('a code is short-lived: past codeLifetimeSeconds it is refused', async () => {
    const before = ts.lines.filter((l) => l.includes('"msg":"code issued"')).length;
    const c = redirected(await ask()).code;
    const issued = await lineOf('code issued', before + 1);
    expect(issued).toMatchObject({ clientId: 'web-client', userId: 'alice' });
    await at(issued.expiresAt as number);
    const late = await exchange(c);
    expect({ status: late.status, body: late.body }).toEqual({ status: 400, body: invalidGrant });
  });

  it('refresh: a new user token without the user, the refresh token rotated; a used or expired one is refused', async () => {
    const c = redirected(await ask({ scope: 'api_a.w' })).code;
    const first = (await exchange(c)).body as Record<string, string>;
    const renewed = await refresh(first.refresh_token);
    expect(renewed.status).toBe(200);
    const body = renewed.body as Record<string, string>;
    expect(body.refresh_token).not.toBe(first.refresh_token);
    expect(body.access_token).not.toBe(first.access_token);
    expect(claimsOf(body.access_token)).toMatchObject({
      user_id: 'alice',
      client_id: 'web-client',
      scope: 'api_a.w',
    });
    // The refresh token is the client's: another client cannot use it.
    const stolen = await refresh(body.refresh_token, basic('other-web', 'other-secret'));
    expect({ status: stolen.status, body: stolen.body }).toEqual({
      status: 400,
      body: invalidGrant,
    });
    // Used once, a refresh token is spent.
    const reused = await refresh(first.refresh_token);
    expect({ status: reused.status, body: reused.body }).toEqual({
      status: 400,
      body: invalidGrant,
    });

    // Expired: past refreshTokenLifetimeSeconds (as the token server logged when it issued it).
    const c2 = redirected(await ask()).code;
    const before = ts.lines.filter((l) => l.includes('"refreshExpiresAt"')).length;
    const second = (await exchange(c2)).body as Record<string, string>;
    await ts.waitForLine(
      () => ts.lines.filter((l) => l.includes('"refreshExpiresAt"')).length > before,
    );
    const issued = JSON.parse(ts.lines.filter((l) => l.includes('"refreshExpiresAt"'))[before]) as {
      refreshExpiresAt: number;
    };
    await at(issued.refreshExpiresAt);
    const expired = await refresh(second.refresh_token);
    expect({ status: expired.status, body: expired.body }).toEqual({
      status: 400,
      body: invalidGrant,
    });
  });

  it('PKCE (S256): a code asked with a challenge needs its verifier', async () => {
    const verifier = 'a'.repeat(20) + 'B'.repeat(23);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const c = redirected(
      await ask({ code_challenge: challenge, code_challenge_method: 'S256' }),
    ).code;
    const without = await exchange(c);
    expect({ status: without.status, body: without.body }).toEqual({
      status: 400,
      body: invalidGrant,
    });
    expect((await exchange(c, REDIRECT, undefined, { code_verifier: verifier })).status).toBe(200);
    const plain = redirected(
      await ask({ code_challenge: verifier, code_challenge_method: 'plain', state: 's' }),
    );
    expect(plain).toEqual({
      error: 'invalid_request',
      error_description:
        'code_challenge must be 43 base64url characters with code_challenge_method S256',
      state: 's',
    });
  });

  it("the code endpoint's refusals: light-4j bodies where no redirect is safe, an OAuth error by redirect otherwise", async () => {
    const status = async (p: ReturnType<typeof code>) => {
      const a = await p;
      expect(a.headers.location).toBeUndefined();
      expect(a.headers['content-type']).toBe('application/json');
      return { status: a.status, body: a.body, challenge: a.headers['www-authenticate'] };
    };
    const q = { response_type: 'code', client_id: 'web-client', redirect_uri: REDIRECT };
    expect(await status(code(q, null))).toEqual({
      status: 401,
      body: {
        statusCode: 401,
        code: 'ERR12002',
        message: 'MISSING_AUTHORIZATION_HEADER',
        description: 'Missing authorization header: the user authenticates with Basic',
      },
      challenge: 'Basic realm="OAuth", charset="UTF-8"',
    });
    expect((await status(code(q, basic('alice', 'wrong')))).body).toMatchObject({
      statusCode: 401,
      code: 'ERR12004',
    });
    expect((await status(code(q, basic('mallory', 'alice-password')))).status).toBe(401);
    expect((await status(code({ ...q, client_id: 'nobody' }))).body).toEqual({
      statusCode: 404,
      code: 'ERR12014',
      message: 'CLIENT_NOT_FOUND',
      description: 'Client nobody is not found.',
    });
    expect((await status(code({ ...q, client_id: '<script>' }))).body).toMatchObject({
      description: 'Client is not found.',
    });
    expect((await status(code({ ...q, redirect_uri: 'https://evil.example/cb' }))).body).toEqual({
      statusCode: 400,
      code: 'ERR12026',
      message: 'MISMATCH_REDIRECT_URI',
      description: 'redirect_uri is not a redirect URI registered for client web-client',
    });
    // Several registered and none named: which one is not guessed.
    const { redirect_uri: _omitted, ...noRedirect } = q;
    expect((await status(code(noRedirect))).body).toMatchObject({ code: 'ERR12026' });
    expect((await status(code({ ...q, client_id: 'service-only' }))).body).toMatchObject({
      code: 'ERR12026',
      description:
        'Client service-only has no redirect URI registered: it cannot use the authorization code grant',
    });
    expect(await status(code(q, ALICE, 'POST'))).toMatchObject({
      status: 405,
      body: { code: 'ERR10008' },
    });
    // With a checked redirect URI, the client hears of the error by redirect, with its state.
    expect(redirected(await ask({ response_type: 'token', state: 's1' }))).toEqual({
      error: 'unsupported_response_type',
      error_description: 'response_type must be code',
      state: 's1',
    });
    expect(
      redirected(await code({ client_id: 'web-client', redirect_uri: REDIRECT })),
    ).toMatchObject({
      error: 'invalid_request',
    });
    expect(redirected(await ask({ scope: 'api_a.r admin' }))).toEqual({
      error: 'invalid_scope',
      error_description: 'the client may not ask for some of the scopes',
    });
    const twice = await httpsRequest(
      `${ts.tokenUrl}/oauth2/code?response_type=code&client_id=web-client&redirect_uri=${encodeURIComponent(REDIRECT)}&scope=a&scope=b`,
      { headers: { Authorization: ALICE } },
    );
    expect(redirected(twice)).toEqual({
      error: 'invalid_request',
      error_description: 'scope is given more than once',
    });
    // The one other registered URI works, and one registered URI may be left out.
    expect(
      redirected(
        await ask({ redirect_uri: 'https://localhost:3000/other' }),
        'https://localhost:3000/other',
      ),
    ).toHaveProperty('code');
    const { redirect_uri: _none, ...only } = { ...q, client_id: 'other-web' };
    expect(redirected(await code(only))).toHaveProperty('code');
  });

  it('counts code requests and codes per client; logs neither codes, tokens nor passwords', async () => {
    const stats = (await httpsRequest(`${ts.tokenUrl}/stats`)).body as {
      codeRequests: Record<string, number>;
      codesIssued: Record<string, number>;
    };
    // Requests by the client they named (`unknown`: no user, no such client, not a GET).
    expect(stats.codesIssued).toEqual({ 'web-client': 9, 'other-web': 1 });
    expect(stats.codeRequests).toEqual({
      'web-client': 16,
      'other-web': 1,
      'service-only': 1,
      unknown: 6,
    });
    const log = ts.lines.join('\n');
    for (const secret of ['alice-password', 'web-secret', 'other-secret']) {
      expect(log).not.toContain(secret);
    }
    expect(log).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
    expect(log).not.toMatch(/"code":"[A-Za-z0-9_-]{20,}"/);
    expect(log).toContain('"msg":"code refused"');
  });
});
