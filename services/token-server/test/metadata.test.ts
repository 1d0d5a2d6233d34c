import path from 'node:path';
import {
  runToExit,
  httpsRequest,
  CERTS,
  ROOT,
  configDir,
  startExpectingFailure,
  claimsOf,
  startTokenServerAtIssuer,
  tokenServerYml,
  type TokenServerProcess,
} from '@chain/testkit';

// Runs the built server (dist/): `pnpm build` first, as for the e2e tests.
const REDIRECT = 'https://localhost:3000/authorization';
const CLIENTS = `clients:
  web-app:
    secret: web-app-secret
    scope: [api_a.r, api_a.w]
    redirectUri: ${REDIRECT}
  service:
    secret: service-secret
    scope: [api_b.r]
  opaque-service:
    secret: opaque-secret
    scope: [api_b.r]
    accessTokenFormat: opaque
`;
const USERS = 'users:\n  alice: { password: alice-password }\n';
const basic = (id: string, secret: string) =>
  'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');
const form = (url: string, body: Record<string, string>, auth?: string) =>
  httpsRequest(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      ...(auth ? { Authorization: auth } : {}),
    },
    body: new URLSearchParams(body).toString(),
  });
const PATHS = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'];

describe('the token server metadata (a real process over HTTPS)', () => {
  let ts: TokenServerProcess;
  let issuer: string;
  beforeAll(async () => {
    ts = await startTokenServerAtIssuer({ files: { 'clients.yml': CLIENTS, 'users.yml': USERS } });
    issuer = ts.tokenUrl;
  });
  afterAll(async () => {
    expect(await ts.stop()).toBe(0);
  });

  /** Exactly what works: the code endpoint, the three grants, Basic client secrets, S256. */
  const expected = () => ({
    issuer,
    authorization_endpoint: `${issuer}/oauth2/code`,
    token_endpoint: `${issuer}/oauth2/token`,
    jwks_uri: `${issuer}/oauth2/jwks`,
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic'],
    scopes_supported: ['api_a.r', 'api_a.w', 'api_b.r'],
    introspection_endpoint: `${issuer}/oauth2/introspection`,
    revocation_endpoint: `${issuer}/oauth2/revocation`,
  });

  it.each(PATHS)(
    '%s: exactly what works, and the issuer is the URL it is served from',
    async (at) => {
      const answer = await httpsRequest(`${issuer}${at}`);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.body).toEqual(expected());
    },
  );

  it('every URL it names answers what it is there for', async () => {
    const metadata = (await httpsRequest(`${issuer}${PATHS[1]}`)).body as Record<string, string>;
    const opaqueToken = async () => {
      const answer = await form(
        metadata.token_endpoint,
        { grant_type: 'client_credentials' },
        basic('opaque-service', 'opaque-secret'),
      );
      return (answer.body as { access_token: string }).access_token;
    };
    const probes: Record<string, (url: string) => Promise<void>> = {
      authorization_endpoint: async (url) => {
        const query = `response_type=code&client_id=web-app&state=s1`;
        const anonymous = await httpsRequest(`${url}?${query}`);
        expect([anonymous.status, (anonymous.body as { code: string }).code]).toEqual([
          401,
          'ERR12002',
        ]);
        const answer = await httpsRequest(`${url}?${query}`, {
          headers: { Authorization: basic('alice', 'alice-password') },
        });
        expect(answer.status).toBe(302);
        const location = new URL(answer.headers.location as string);
        expect(location.origin + location.pathname).toBe(REDIRECT);
        expect([...location.searchParams.keys()]).toEqual(['code', 'state']);
      },
      token_endpoint: async (url) => {
        const answer = await form(
          url,
          { grant_type: 'client_credentials' },
          basic('service', 'service-secret'),
        );
        expect(answer.status).toBe(200);
        const token = (answer.body as { access_token: string }).access_token;
        expect(claimsOf(token)).toMatchObject({ iss: issuer, client_id: 'service' });
      },
      introspection_endpoint: async (url) => {
        const token = await opaqueToken();
        const answer = await form(url, { token }, basic('service', 'service-secret'));
        expect({ status: answer.status, body: answer.body }).toEqual({
          status: 200,
          body: expect.objectContaining({ active: true, client_id: 'opaque-service' }),
        });
      },
      revocation_endpoint: async (url) => {
        const token = await opaqueToken();
        const revoked = await form(url, { token }, basic('opaque-service', 'opaque-secret'));
        expect({ status: revoked.status, text: revoked.text }).toEqual({ status: 200, text: '' });
        const after = await form(
          metadata.introspection_endpoint,
          { token },
          basic('service', 'service-secret'),
        );
        expect(after.body).toEqual({ active: false });
      },
      jwks_uri: async (url) => {
        const answer = await httpsRequest(url);
        expect(answer.status).toBe(200);
        const { keys } = answer.body as { keys: Record<string, unknown>[] };
        expect(keys.map((k) => [k.kid, k.kty, k.alg, k.use, k.d])).toEqual([
          ['100', 'RSA', 'RS256', 'sig', undefined],
        ]);
      },
    };
    const urls = Object.keys(metadata).filter((k) => /_(endpoint|uri)$/.test(k));
    // A URL added to the metadata (an endpoint of a feature turned on) needs its probe here.
    expect(urls.sort()).toEqual(Object.keys(probes).sort());
    for (const name of urls) await probes[name](metadata[name]);
  });

  it('what it no longer advertises is not served either: 404, as any unknown route', async () => {
    const requests: [string, string][] = [
      ['GET', '/auth'],
      ['GET', '/oauth2/code/an-interaction'],
      ['GET', '/me'],
      ['GET', '/session/end'],
      ['POST', '/request'],
      ['POST', PATHS[1]],
    ];
    for (const [method, at] of requests) {
      const answer = await httpsRequest(`${issuer}${at}`, { method });
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 404,
        body: {
          error: 'invalid_request',
          error_description: `unrecognized route or not allowed method (${method} on ${at})`,
        },
      });
    }
  });

  it('the token endpoint authenticates clients only as advertised: client_secret_post is refused', async () => {
    const answer = await form(`${issuer}/oauth2/token`, {
      grant_type: 'client_credentials',
      client_id: 'service',
      client_secret: 'service-secret',
    });
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'client authentication failed' },
    });
  });

  it('PKCE cannot be added at the token endpoint to a code asked without a challenge', async () => {
    const answer = await httpsRequest(
      `${issuer}/oauth2/code?response_type=code&client_id=web-app`,
      { headers: { Authorization: basic('alice', 'alice-password') } },
    );
    const code = new URL(answer.headers.location as string).searchParams.get('code')!;
    const exchange = await form(
      `${issuer}/oauth2/token`,
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: 'a'.repeat(43),
      },
      basic('web-app', 'web-app-secret'),
    );
    expect({ status: exchange.status, body: exchange.body }).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'grant request is invalid' },
    });
  });

  /** The oauth4webapi client (test/support/oauth4webapi-client.mjs), a process of its own. */
  const standardClient = async (algorithm: 'oauth2' | 'oidc') => {
    const input = {
      issuer,
      algorithm,
      clientId: 'web-app',
      clientSecret: 'web-app-secret',
      redirectUri: REDIRECT,
      scope: 'api_a.r',
      user: 'alice',
      password: 'alice-password',
      audience: 'urn:chain:api',
    };
    const script = path.join(ROOT, 'test', 'support', 'oauth4webapi-client.mjs');
    const run = await runToExit(script, {
      args: [JSON.stringify(input)],
      env: { NODE_EXTRA_CA_CERTS: path.join(CERTS, 'ca.crt') },
      timeoutMs: 20000,
    });
    return { ...run, result: JSON.parse(run.stdout) as Record<string, unknown> };
  };

  it.each([
    ['oauth2', 'RFC 8414'],
    ['oidc', 'OpenID Connect Discovery'],
  ] as const)(
    'a standard client (oauth4webapi, %s discovery: %s) runs every grant from the metadata alone',
    async (algorithm, _spec) => {
      const { code, stderr, result } = await standardClient(algorithm);
      expect(result.error).toBeUndefined();
      expect([code, stderr]).toEqual([0, '']);
      expect(result.metadata).toEqual(expected());
      expect(result.authorization).toEqual({ status: 302, parameters: ['code', 'state'] });
      // Each access token as oauth4webapi verified it (RFC 9068, the keys at jwks_uri).
      const claims = (clientId: string, userId?: string) => ({
        iss: issuer,
        aud: 'urn:chain:api',
        client_id: clientId,
        sub: userId ?? clientId,
        ...(userId ? { user_id: userId } : {}),
        scope: 'api_a.r',
        iat: expect.any(Number),
        exp: expect.any(Number),
        jti: expect.any(String),
      });
      const userToken = {
        token_type: 'bearer',
        expires_in: 600,
        scope: 'api_a.r',
        refresh_token: 'string',
        claims: claims('web-app', 'alice'),
      };
      expect(result.code).toEqual(userToken);
      expect(result.refresh).toEqual(userToken);
      expect(result.clientCredentials).toEqual({
        token_type: 'bearer',
        expires_in: 600,
        scope: 'api_a.r',
        claims: claims('web-app'),
      });
    },
  );
});

describe('the metadata of sender-constrained tokens: advertised when enabled, and only then', () => {
  const MTLS = `mtls:\n  enabled: true\n  caFile: ${CERTS}/clients/ca.crt\n`;
  const DPOP = 'dpop:\n  enabled: true\n';
  const BOUND_CLIENTS = `clients:
  service:
    tokenEndpointAuthMethod: tls_client_auth
    tlsClientAuthSubjectDn: CN=api-a,O=secured-rest-chain dev
    certificateBoundAccessTokens: true
    scope: [api_b.r]
  other:
    secret: other-secret
    scope: [api_c.r]
`;
  const base = (issuer: string) => ({
    issuer,
    authorization_endpoint: `${issuer}/oauth2/code`,
    token_endpoint: `${issuer}/oauth2/token`,
    jwks_uri: `${issuer}/oauth2/jwks`,
    introspection_endpoint: `${issuer}/oauth2/introspection`,
    revocation_endpoint: `${issuer}/oauth2/revocation`,
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
  });

  it.each([
    [
      'mTLS with a tls_client_auth client, and DPoP',
      MTLS + DPOP,
      BOUND_CLIENTS,
      {
        token_endpoint_auth_methods_supported: ['tls_client_auth', 'client_secret_basic'],
        scopes_supported: ['api_b.r', 'api_c.r'],
        tls_client_certificate_bound_access_tokens: true,
        dpop_signing_alg_values_supported: ['ES256', 'EdDSA'],
      },
    ],
    [
      'mTLS, every client by its secret',
      MTLS,
      'clients:\n  other:\n    secret: s\n    certificateBoundAccessTokens: true\n    scope: [a]\n',
      {
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        scopes_supported: ['a'],
        tls_client_certificate_bound_access_tokens: true,
      },
    ],
    [
      'DPoP alone',
      DPOP,
      'clients:\n  other:\n    secret: s\n',
      {
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        scopes_supported: [],
        dpop_signing_alg_values_supported: ['ES256', 'EdDSA'],
      },
    ],
  ])('%s', async (_what, extra, clients, members) => {
    const ts = await startTokenServerAtIssuer({ extra, files: { 'clients.yml': clients } });
    try {
      for (const at of PATHS) {
        const answer = await httpsRequest(`${ts.tokenUrl}${at}`);
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({ ...base(ts.tokenUrl), ...members });
      }
    } finally {
      expect(await ts.stop()).toBe(0);
    }
  });
});

describe('token server start: the issuer', () => {
  it.each(['https://localhost:6882/tenant', 'https://localhost:6882?x=1', 'http://localhost:6882'])(
    '%s stops it with the file and key named',
    async (issuer) => {
      const dir = configDir({ 'token-server.yml': tokenServerYml(`issuer: '${issuer}'\n`) });
      const { code, stderr } = await startExpectingFailure('token-server', dir);
      expect(code).toBe(1);
      expect(stderr).toBe(
        `Cannot start: Config error in ${dir}/token-server.yml at key "issuer": the issuer is an https URL without a path, query or fragment, like https://localhost:6882\n`,
      );
    },
  );
});
