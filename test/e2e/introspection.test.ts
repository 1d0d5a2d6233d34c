import {
  CERTS,
  clientCredentialsToken,
  configDir,
  httpsRequest,
  startService,
  startTokenServer,
  tokenServerYml,
  type ServiceProcess,
  type TokenServerProcess,
} from '@chain/testkit';

// Opaque tokens by introspection over real processes: the token server issues an opaque token
// to a client configured for them and introspects it (oidc-provider); the petstore, with
// light-4j's enableVerifySwt beside JWT verification, asks it once per token within the
// cache's life, enforces the scopes of the answer, refuses a revoked token once its cached
// answer has expired, and answers 503 while the token server is down.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

/** The cache's bound on an answer's age here (security.yml swt.cacheMaxAgeSeconds). */
const CACHE_S = 3;

const CLIENTS = `clients:
  petstore-client: { secret: petstore-secret, scope: [] }
  opaque-app:
    secret: opaque-secret
    scope: [read:pets, write:pets]
    accessTokenFormat: opaque
  jwt-app: { secret: jwt-secret, scope: [read:pets] }
  web-user:
    secret: web-user-secret
    scope: [read:pets]
    redirectUri: https://localhost:3000/authorization
    accessTokenFormat: opaque
`;
const USERS = 'users:\n  alice: { password: alice-password }\n';

const basic = (id: string, secret: string) =>
  'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');

describe('opaque tokens by introspection (token server and petstore as processes)', () => {
  let ts: TokenServerProcess;
  let petstore: ServiceProcess;
  let pet: string;

  beforeAll(async () => {
    ts = await startTokenServer({
      yml: tokenServerYml(),
      files: { 'clients.yml': CLIENTS, 'users.yml': USERS },
    });
    const dir = configDir(petstoreFiles('urn:chain:api'));
    petstore = await startService('petstore', { configDir: dir });
    pet = `https://localhost:${petstore.port}/v2/pet/1`;
  });

  /** The petstore's override files, the audience its tokens must name. */
  const petstoreFiles = (audience: string) => ({
    'server.yml': `serviceId: com.networknt.petstore-1.0.0
ip: 127.0.0.1
httpsPort: 0
keyFile: ${CERTS}/server.key
certFile: ${CERTS}/server.crt
`,
    'security.yml': `enableVerifyJwt: true
enableVerifySwt: true
swt:
  cacheMaxAgeSeconds: ${CACHE_S}
jwt:
  certificate:
    '100': ${CERTS}/primary.crt
logJwtToken: false
logClientUserScope: true
`,
    'client.yml': `tls:
  trustStore: ${CERTS}/ca.crt
oauth:
  key:
    server_url: ${ts.keyUrl}
    client_id: petstore-client
    audience: ${audience}
    issuer: https://localhost:6882
  introspection:
    server_url: ${ts.tokenUrl}
    client_id: petstore-client
`,
    'secret.yml': 'keyClientSecret: petstore-secret\nintrospectionClientSecret: petstore-secret\n',
    'metrics.yml': 'enabled: false\n',
  });

  afterAll(async () => {
    await Promise.all([petstore?.stop(), ts?.stop()]);
  });

  const opaqueToken = (scope = 'read:pets') =>
    clientCredentialsToken(ts.tokenUrl, 'opaque-app', 'opaque-secret', scope);
  const get = (token: string, headers: Record<string, string> = {}) =>
    httpsRequest(pet, { headers: { Authorization: `Bearer ${token}`, ...headers } });
  /** The token server's own count of introspections, by the client that asked. */
  const introspections = async () =>
    (
      (await httpsRequest(`${ts.tokenUrl}/stats`)).body as {
        introspectionRequests: Record<string, number>;
      }
    ).introspectionRequests;
  /** The token server's log lines of introspections so far. */
  const introspected = () =>
    ts.lines
      .filter((l) => l.includes('"msg":"token introspected"'))
      .map((l) => JSON.parse(l) as { time: string; clientId: string; active: boolean });
  /**
   * How many introspections the token server counted, once its log has the line of each (a line
   * comes when the server's logger writes its buffer, maybe after the answer).
   */
  const introspectionsLogged = async () => {
    const total = Object.values(await introspections()).reduce((sum, n) => sum + n, 0);
    await ts.waitForLine(() => introspected().length >= total);
    return total;
  };
  /** The next introspection line after the `seen` first ones, once the token server wrote it. */
  const nextIntrospection = async (seen: number) => {
    await ts.waitForLine(() => introspected().length > seen);
    return introspected()[seen];
  };

  it('accepts an opaque token of the real token server, asking once per token within the cache life, concurrent requests too', async () => {
    const token = await opaqueToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const before = (await introspections())['petstore-client'] ?? 0;
    const first = await get(token);
    expect([first.status, (first.body as { name: string }).name]).toEqual([200, 'Rex']);
    for (let i = 0; i < 4; i++) expect((await get(token)).status).toBe(200);
    // A new token asked by ten requests at once: one introspection, shared.
    const fresh = await opaqueToken();
    const all = await Promise.all(Array.from({ length: 10 }, () => get(fresh)));
    expect(all.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect((await introspections())['petstore-client'] - before).toBe(2);
    // A JWT beside them is verified as one: no introspection.
    const jwt = await clientCredentialsToken(ts.tokenUrl, 'jwt-app', 'jwt-secret');
    expect((await get(jwt)).status).toBe(200);
    expect((await introspections())['petstore-client'] - before).toBe(2);
    // The audit line has the caller of the answer, and never the opaque token.
    const audit = await petstore.waitForLine((l) => l.includes('"msg":"jwt verified"'));
    expect(JSON.parse(audit)).toMatchObject({ client_id: 'opaque-app', scope: 'read:pets' });
    expect(petstore.lines.join('\n')).not.toContain(token);
  });

  it('enforces the scopes of the answer: 403 ERR10005 with the challenge', async () => {
    const writer = await opaqueToken('write:pets');
    const answer = await get(writer);
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 403,
      body: {
        statusCode: 403,
        code: 'ERR10005',
        message: 'AUTH_TOKEN_SCOPE_MISMATCH',
        description:
          'Scopes [write:pets] in authorization token and specification scopes [read:pets] are not matched',
      },
    });
    expect(answer.headers['www-authenticate']).toBe(
      'Bearer realm="api", error="insufficient_scope", error_description="Scopes [write:pets] in authorization token and specification scopes [read:pets] are not matched", scope="read:pets"',
    );
  });

  it("light-4j's swt-client / swt-secret headers: the introspection asks as that client", async () => {
    const token = await opaqueToken();
    const before = (await introspections())['opaque-app'] ?? 0;
    const own = { 'swt-client': 'opaque-app', 'swt-secret': 'opaque-secret' };
    expect((await get(token, own)).status).toBe(200);
    expect((await introspections())['opaque-app'] - before).toBe(1);
    const refused = await get(token, { ...own, 'swt-secret': 'not-the-secret' });
    expect({ status: refused.status, code: (refused.body as { code: string }).code }).toEqual({
      status: 401,
      code: 'ERR10080',
    });
  });

  it('refuses a revoked token once its cached answer expires: 401 ERR10081', async () => {
    const token = await opaqueToken();
    const seen = await introspectionsLogged();
    expect((await get(token)).status).toBe(200);
    const asked = await nextIntrospection(seen);
    expect([asked.clientId, asked.active]).toEqual(['petstore-client', true]);
    const revoked = await httpsRequest(`${ts.tokenUrl}/oauth2/revocation`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: basic('opaque-app', 'opaque-secret'),
      },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    });
    expect(revoked.status).toBe(200);
    // Within the cache's life the kept answer still serves (RFC 7662 section 4's trade) ...
    const cachedUntil = Date.parse(asked.time) + CACHE_S * 1000;
    expect(cachedUntil - Date.now()).toBeGreaterThan(500); // the test is not too slow to see it
    expect((await get(token)).status).toBe(200);
    // ... and from the moment it expires (counted from the call, before the server's line),
    // the token server is asked again and says the token is not active.
    await new Promise((resolve) => setTimeout(resolve, cachedUntil + 20 - Date.now()));
    const refused = await get(token);
    expect(await nextIntrospection(seen + 1)).toMatchObject({
      clientId: 'petstore-client',
      active: false,
    });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 401,
      body: {
        statusCode: 401,
        code: 'ERR10081',
        message: 'INTROSPECTED_TOKEN_EXPIRED',
        description: 'Introspected token is not active: expired, revoked or unknown',
      },
    });
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="api", error="invalid_token", error_description="Introspected token is not active: expired, revoked or unknown"',
    );
  });

  const INACTIVE_ANSWER = {
    status: 401,
    body: {
      statusCode: 401,
      code: 'ERR10081',
      message: 'INTROSPECTED_TOKEN_EXPIRED',
      description: 'Introspected token is not active: expired, revoked or unknown',
    },
  };

  it("a user's refresh token is not an access token: 401 ERR10081, its access token 200", async () => {
    const redirect = await httpsRequest(
      `${ts.tokenUrl}/oauth2/code?${new URLSearchParams({
        response_type: 'code',
        client_id: 'web-user',
        redirect_uri: 'https://localhost:3000/authorization',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })}`,
      { headers: { Authorization: basic('alice', 'alice-password') } },
    );
    expect(redirect.status).toBe(302);
    const code = new URL(redirect.headers.location as string).searchParams.get('code')!;
    const tokens = await httpsRequest(`${ts.tokenUrl}/oauth2/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: basic('web-user', 'web-user-secret'),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'https://localhost:3000/authorization',
        code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      }).toString(),
    });
    expect(tokens.status).toBe(200);
    const { access_token, refresh_token } = tokens.body as Record<string, string>;
    const refused = await get(refresh_token);
    expect({ status: refused.status, body: refused.body }).toEqual(INACTIVE_ANSWER);
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="api", error="invalid_token", error_description="Introspected token is not active: expired, revoked or unknown"',
    );
    expect((await get(refresh_token)).status).toBe(401); // never kept as active
    expect((await get(access_token)).status).toBe(200);
    expect(petstore.lines.join('\n')).not.toContain(refresh_token);
  });

  it('an answer for another audience: 401 ERR10081 at a petstore of that other audience', async () => {
    const other = await startService('petstore', {
      configDir: configDir(petstoreFiles('urn:chain:other')),
    });
    try {
      const answer = await httpsRequest(`https://localhost:${other.port}/v2/pet/1`, {
        headers: { Authorization: `Bearer ${await opaqueToken()}` },
      });
      expect({ status: answer.status, body: answer.body }).toEqual(INACTIVE_ANSWER);
      const line = await other.waitForLine((l) => l.includes('"code":"ERR10081"'));
      expect(JSON.parse(line)).toMatchObject({ reason: 'aud holds no accepted audience' });
    } finally {
      await other.stop();
    }
  });

  it('answers 503 ERR10079 while the token server is down; never a cached "active" for a token it has not seen', async () => {
    const unseen = await opaqueToken();
    expect(await ts.stop()).toBe(0);
    const answer = await get(unseen);
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 503,
      body: {
        statusCode: 503,
        code: 'ERR10079',
        message: 'OAUTH_INTROSPECTION_ERROR',
        description:
          'Unable to introspect the token: the introspection server could not be reached or gave no valid answer',
      },
    });
    expect(answer.headers['www-authenticate']).toBeUndefined();
    const line = await petstore.waitForLine((l) => l.includes('"code":"ERR10079"'));
    expect(JSON.parse(line)).toMatchObject({
      level: 40,
      reason: expect.stringMatching(
        /^introspection server https:\/\/localhost:\d+\/oauth2\/introspection could not be reached \(ECONNREFUSED\)$/,
      ),
    });
    expect(line).not.toContain(unseen);
  });
});
