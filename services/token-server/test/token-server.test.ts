import { createVerify } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { createSigningKey } from '@chain/testkit';
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
