import { X509Certificate, createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  CERTS,
  claimsOf,
  configDir,
  createSigningKey,
  devSigningKey,
  httpsRequest,
  mintToken,
  postForm,
  startExpectingFailure,
  startTokenServer,
  tokenServerYml,
  type TokenServerProcess,
} from '@chain/testkit';

// RFC 8693 token exchange against the built server (dist/), over real HTTPS: the policy of
// token-server.yml `tokenExchange`, the RFC's errors, the `act` chain and the binding of the
// exchanged token to the requester's certificate (RFC 8705) or DPoP key (RFC 9449).
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const CLIENT_CERTS = path.join(CERTS, 'clients');
const POLICY = `tokenExchange:
  api-a-client:
    subjectAudience: [urn:chain:api]
    audience: [api-b]
    scope: [api_b.r, api_b.w]
  api-b-client:
    subjectAudience: [api-b]
    audience: [api-c]
    scope: [api_c.r]
  api-c-client:
    subjectAudience: [api-c]
    audience: [api-d]
    scope: [api_d.r]
mtls:
  enabled: true
  caFile: ${CLIENT_CERTS}/ca.crt
dpop:
  enabled: true
`;
const CLIENTS = `clients:
  api-a-client:
    secret: api-a-secret
  api-b-client:
    secret: api-b-secret
  api-c-client:
    tokenEndpointAuthMethod: tls_client_auth
    tlsClientAuthSubjectDn: CN=api-c,O=secured-rest-chain dev
    certificateBoundAccessTokens: true
  api-d-client:
    secret: api-d-secret
`;

const basic = (id: string, secret: string) =>
  'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');
const A = basic('api-a-client', 'api-a-secret');
const B = basic('api-b-client', 'api-b-secret');
const primary = devSigningKey('100');
/** A user's token as the token server issues it (its primary key, its issuer, the chain's aud). */
const userToken = (claims: Record<string, unknown> = {}, expiresIn = 600) =>
  mintToken(primary, {
    expiresIn,
    clientId: 'chain-user',
    userId: 'alice',
    scope: 'api_a.r',
    claims: { sub: 'alice', ...claims },
  });

describe('token exchange (RFC 8693, a real process over HTTPS)', () => {
  let ts: TokenServerProcess;
  let endpoint: string;
  const exchange = (auth: string, form: Record<string, string>, headers = {}, client?: object) =>
    postForm(
      endpoint,
      { grant_type: EXCHANGE, subject_token_type: ACCESS_TOKEN, ...form },
      { ...(auth && { Authorization: auth }), ...headers },
      client as never,
    );
  beforeAll(async () => {
    ts = await startTokenServer({
      yml: tokenServerYml(POLICY),
      files: { 'clients.yml': CLIENTS },
    });
    endpoint = `${ts.tokenUrl}/oauth2/token`;
  });
  afterAll(async () => {
    expect(await ts.stop()).toBe(0);
  });

  it('a hop gets a token for the next hop only: the user kept, the scopes asked, act naming it', async () => {
    const before = Math.floor(Date.now() / 1000);
    const answer = await exchange(A, {
      subject_token: userToken(),
      audience: 'api-b',
      scope: 'api_b.r',
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.body).toEqual({
      access_token: expect.any(String),
      issued_token_type: ACCESS_TOKEN,
      token_type: 'Bearer',
      expires_in: 600,
      scope: 'api_b.r',
    });
    const claims = claimsOf(answer.body.access_token as string);
    expect(claims).toEqual({
      iss: 'https://localhost:6882',
      aud: 'api-b',
      sub: 'alice',
      user_id: 'alice',
      client_id: 'api-a-client',
      scope: 'api_b.r',
      act: { sub: 'api-a-client' },
      jti: expect.any(String),
      iat: expect.any(Number),
      exp: (claims.iat as number) + 600,
    });
    expect(claims.iat).toBeGreaterThanOrEqual(before);
  });

  it('the metadata lists the grant (the policy names a client)', async () => {
    const answer = await httpsRequest(`${ts.tokenUrl}/.well-known/oauth-authorization-server`);
    expect((answer.body as { grant_types_supported: string[] }).grant_types_supported).toEqual([
      'authorization_code',
      'refresh_token',
      'client_credentials',
      EXCHANGE,
    ]);
  });

  it('the next hop exchanges it in turn: act nests the delegation chain, scope defaults to the policy', async () => {
    const first = await exchange(A, { subject_token: userToken(), audience: 'api-b' });
    expect(first.body.scope).toBe('api_b.r api_b.w');
    const second = await exchange(B, {
      subject_token: first.body.access_token as string,
      audience: 'api-c',
    });
    expect(second.status).toBe(200);
    expect(claimsOf(second.body.access_token as string)).toMatchObject({
      aud: 'api-c',
      sub: 'alice',
      user_id: 'alice',
      client_id: 'api-b-client',
      scope: 'api_c.r',
      act: { sub: 'api-b-client', act: { sub: 'api-a-client' } },
    });
  });

  describe('outside the policy: the RFC 8693 / RFC 6749 errors, HTTP 400', () => {
    const refusals: [string, () => [string, Record<string, string>], string, string][] = [
      [
        'a client without a tokenExchange entry',
        () => [
          basic('api-d-client', 'api-d-secret'),
          { subject_token: userToken(), audience: 'api-b' },
        ],
        'unauthorized_client',
        'the client may not exchange tokens',
      ],
      [
        'an audience the client may not ask for',
        () => [A, { subject_token: userToken(), audience: 'api-c' }],
        'invalid_target',
        'the client may not exchange for this audience',
      ],
      [
        'no audience',
        () => [A, { subject_token: userToken() }],
        'invalid_target',
        'the client may not exchange for this audience',
      ],
      [
        'a scope the client may not ask for',
        () => [A, { subject_token: userToken(), audience: 'api-b', scope: 'api_b.r api_c.r' }],
        'invalid_scope',
        'the client may not exchange for this scope',
      ],
      [
        'a subject token for another audience (api-b-client given the user token)',
        () => [B, { subject_token: userToken(), audience: 'api-c' }],
        'invalid_request',
        'subject_token is invalid, expired or not for this client',
      ],
      [
        'an expired subject token',
        () => [A, { subject_token: userToken({}, -1), audience: 'api-b' }],
        'invalid_request',
        'subject_token is invalid, expired or not for this client',
      ],
      [
        'a subject token of another issuer',
        () => [A, { subject_token: userToken({ iss: 'https://elsewhere' }), audience: 'api-b' }],
        'invalid_request',
        'subject_token is invalid, expired or not for this client',
      ],
      [
        'a subject token signed by another key under kid 100',
        () => [
          A,
          {
            subject_token: mintToken(createSigningKey('100'), { claims: { sub: 'alice' } }),
            audience: 'api-b',
          },
        ],
        'invalid_request',
        'subject_token is invalid, expired or not for this client',
      ],
      [
        'a subject token that is no JWT',
        () => [A, { subject_token: 'opaque', audience: 'api-b' }],
        'invalid_request',
        'subject_token is invalid, expired or not for this client',
      ],
      [
        'a subject token type other than an access token or a JWT',
        () => [
          A,
          {
            subject_token: userToken(),
            audience: 'api-b',
            subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
          },
        ],
        'invalid_request',
        'subject_token_type is not an access token or a JWT',
      ],
      [
        'a requested token type other than an access token',
        () => [
          A,
          {
            subject_token: userToken(),
            audience: 'api-b',
            requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
          },
        ],
        'invalid_request',
        'requested_token_type: only access tokens are issued',
      ],
    ];
    it.each(
      refusals.map(([what, request, error, description]) => ({
        what,
        request,
        error,
        description,
      })),
    )('$what: $error', async ({ request, error, description }) => {
      const [auth, form] = request();
      const answer = await exchange(auth, form);
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      const refused = error === 'invalid_scope' ? { scope: 'api_c.r' } : {};
      expect(answer.body).toEqual({ error, error_description: description, ...refused });
    });

    it('a client that fails to authenticate: 401 invalid_client, whatever it asks', async () => {
      const answer = await exchange(basic('api-a-client', 'wrong'), {
        subject_token: userToken(),
        audience: 'api-b',
      });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
    });
  });

  describe('bound to the requester', () => {
    const pem = fs.readFileSync(path.join(CLIENT_CERTS, 'api-c.pem'));
    const x5t = Buffer.from(
      new X509Certificate(fs.readFileSync(path.join(CLIENT_CERTS, 'api-c.crt'))).fingerprint256
        .split(':')
        .join(''),
      'hex',
    ).toString('base64url');
    const subjectFor = (aud: string) => userToken({ aud });

    it('a certificate-bound client: the exchanged token carries cnf.x5t#S256 of its certificate', async () => {
      const answer = await exchange(
        '',
        { client_id: 'api-c-client', subject_token: subjectFor('api-c'), audience: 'api-d' },
        {},
        { key: pem, cert: pem },
      );
      expect(answer.status).toBe(200);
      expect(answer.body.token_type).toBe('Bearer');
      const claims = claimsOf(answer.body.access_token as string);
      expect(claims).toMatchObject({ aud: 'api-d', act: { sub: 'api-c-client' } });
      expect(claims.cnf).toEqual({ 'x5t#S256': x5t });
    });

    it('with a DPoP proof: token_type DPoP and cnf.jkt of the proof key; a replayed proof is refused', async () => {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const { crv, kty, x, y } = publicKey.export({ format: 'jwk' });
      const jwk = { crv, kty, x, y };
      const thumbprint = createHash('sha256').update(JSON.stringify(jwk)).digest('base64url');
      const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const input = `${part({ typ: 'dpop+jwt', alg: 'ES256', jwk })}.${part({
        jti: randomUUID(),
        iat: Math.floor(Date.now() / 1000),
        htm: 'POST',
        htu: endpoint,
      })}`;
      const signature = sign('sha256', Buffer.from(input), {
        key: privateKey,
        dsaEncoding: 'ieee-p1363',
      });
      const proof = `${input}.${signature.toString('base64url')}`;
      const form = { subject_token: userToken(), audience: 'api-b' };
      const answer = await exchange(A, form, { DPoP: proof });
      expect(answer.status).toBe(200);
      expect(answer.body.token_type).toBe('DPoP');
      expect(claimsOf(answer.body.access_token as string).cnf).toEqual({ jkt: thumbprint });
      const again = await exchange(A, form, { DPoP: proof });
      expect(again.status).toBe(400);
      expect(again.body).toEqual({
        error: 'invalid_grant',
        error_description: 'grant request is invalid',
      });
    });
  });

  it('a tokenExchange entry naming a client clients.yml lacks stops the start, naming file and key', async () => {
    const dir = configDir({
      'token-server.yml': tokenServerYml(
        'tokenExchange:\n  nobody:\n    subjectAudience: [a]\n    audience: [b]\n',
      ),
    });
    const { code, stderr } = await startExpectingFailure('token-server', dir);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Cannot start: Config error in ${dir}/token-server.yml at key "tokenExchange.nobody": names a client clients.yml does not have\n`,
    );
  });
});
