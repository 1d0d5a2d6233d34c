import { createVerify } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CERTS, configDir, startExpectingFailure } from '../../../test/support/service-process';
import {
  claimsOf,
  startTokenServer,
  tokenRequestCounts,
  tokenServerYml,
  type TokenServerProcess,
} from '../../../test/support/local-token-server';
import { httpsRequest } from '../../../scripts/lib/https-request.cjs';

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

  it('key server: the PEM certificate by kid to a known client, 401 otherwise, 404 for an unknown kid', async () => {
    const auth = { Authorization: basic('api-b-client', 'api-b-secret') };
    const pem = await httpsRequest(`${ts.keyUrl}/oauth2/key/101`, { headers: auth });
    expect(pem.status).toBe(200);
    expect(pem.headers['content-type']).toBe('application/text');
    expect(pem.text).toBe(fs.readFileSync(path.join(CERTS, 'secondary.crt'), 'utf8'));

    const noAuth = await httpsRequest(`${ts.keyUrl}/oauth2/key/100`);
    expect(noAuth.status).toBe(401);
    expect(noAuth.headers['www-authenticate']).toBe('Basic realm="oauth2-key"');
    expect(noAuth.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
    const wrong = await httpsRequest(`${ts.keyUrl}/oauth2/key/100`, {
      headers: { Authorization: basic('api-b-client', 'api-a-secret') },
    });
    expect(wrong.status).toBe(401);

    const unknown = await httpsRequest(`${ts.keyUrl}/oauth2/key/999`, { headers: auth });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not_found', error_description: 'unknown kid' });
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
