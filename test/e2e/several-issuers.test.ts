import fs from 'node:fs';
import path from 'node:path';
import {
  CERTS,
  ROOT,
  claimsOf,
  clientCredentialsToken,
  configDir,
  devSigningKey,
  httpsRequest,
  mintToken,
  startService,
  startTokenServer,
  tokenServerYml,
  type ServiceProcess,
  type TokenServerProcess,
} from '@chain/testkit';

// security.yml jwt.issuers: one service accepts the tokens of two real token servers, each
// issuer with its own key server (light-oauth2's PEM by kid, a JWKS) and audience, one of them
// only under a path prefix. An issuer it does not list is refused before any key is looked up.
vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

const ONE = 'https://token-one.example';
const TWO = 'https://token-two.example';

const tokenServer = (issuer: string, kid: '100' | '101', audience: string, client: string) =>
  startTokenServer({
    yml: tokenServerYml(`issuer: ${issuer}\naudience: ${audience}\n`).replace(
      /signing:\n {2}kid: '100'\n {2}keyFile: .*\n/,
      `signing:\n  kid: '${kid}'\n  keyFile: ${CERTS}/${kid === '100' ? 'primary' : 'secondary'}.key\n`,
    ),
    files: {
      'clients.yml': `clients:\n  ${client}: { secret: ${client}-secret, scope: [api_d.r] }\n`,
    },
  });

/** api-d's spec with a second operation that has no handler: past security it is ERR10007. */
const openapi = fs
  .readFileSync(path.join(ROOT, 'services', 'api-d', 'config', 'openapi.yaml'), 'utf8')
  .replace(
    'paths:\n',
    "paths:\n  /v1/reports:\n    get:\n      security:\n        - api_d_auth: [api_d.r]\n      responses:\n        '200':\n          description: none\n",
  );

const invalid = {
  statusCode: 401,
  code: 'ERR10000',
  message: 'INVALID_AUTH_TOKEN',
  description: 'Incorrect signature or malformed token in authorization header',
};

describe('jwt.issuers: two token servers, their own key servers and audiences (real processes)', () => {
  let one: TokenServerProcess;
  let two: TokenServerProcess;
  let apiD: ServiceProcess;
  const keyRequests = async (server: TokenServerProcess) =>
    ((await httpsRequest(`${server.tokenUrl}/stats`)).body as { keyRequests: number }).keyRequests;
  const call = (route: string, token: string) =>
    httpsRequest(`https://localhost:${apiD.port}${route}`, {
      headers: { Authorization: `Bearer ${token}` },
    });

  beforeAll(async () => {
    [one, two] = await Promise.all([
      tokenServer(ONE, '100', 'urn:chain:api', 'one-client'),
      tokenServer(TWO, '101', 'urn:chain:two', 'two-client'),
    ]);
    apiD = await startService('api-d', {
      configDir: configDir({
        'openapi.yaml': openapi,
        'server.yml': `serviceId: com.networknt.apid-1.0.0\nip: 127.0.0.1\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`,
        'security.yml': `enableVerifyJwt: true
enableVerifyScope: true
logJwtToken: false
jwt:
  issuers:
    ${ONE}:
      audience: urn:chain:api
      key:
        server_url: ${one.keyUrl}
        client_id: one-client
        client_secret: \${ONE_KEY_SECRET}
    ${TWO}:
      audience: [urn:chain:two]
      key: { server_url: '${two.keyUrl}', uri: /oauth2/jwks, jwk: true }
      pathPrefixes: [/v1/data]
`,
      }),
      env: { ONE_KEY_SECRET: 'one-client-secret' },
    });
  });

  afterAll(async () => {
    await Promise.all([one, two, apiD].filter(Boolean).map((p) => p.stop()));
  });

  it('tokens of both issuers are accepted, each verified with the key of its own key server', async () => {
    const fromOne = await clientCredentialsToken(one.tokenUrl, 'one-client', 'one-client-secret');
    const fromTwo = await clientCredentialsToken(two.tokenUrl, 'two-client', 'two-client-secret');
    expect(claimsOf(fromOne)).toMatchObject({ iss: ONE, aud: 'urn:chain:api' });
    expect(claimsOf(fromTwo)).toMatchObject({ iss: TWO, aud: 'urn:chain:two' });
    for (const token of [fromOne, fromTwo]) {
      const answer = await call('/v1/data', token);
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 200,
        body: ['API D: Message 1', 'API D: Message 2'],
      });
    }
    // Each key server was asked for its own kid only: one PEM look-up, one JWKS.
    expect([await keyRequests(one), await keyRequests(two)]).toEqual([1, 1]);
  });

  it("a path only the other issuer may serve: TWO's token is ERR10000 at /v1/reports, ONE's passes", async () => {
    const fromOne = await clientCredentialsToken(one.tokenUrl, 'one-client', 'one-client-secret');
    const fromTwo = await clientCredentialsToken(two.tokenUrl, 'two-client', 'two-client-secret');
    const refused = await call('/v1/reports', fromTwo);
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 401, body: invalid });
    expect(refused.headers['www-authenticate']).toBe(
      `Bearer realm="api", error="invalid_token", error_description="${invalid.description}"`,
    );
    // ONE's token passes security there: the operation has no handler (404 ERR10007).
    const passed = await call('/v1/reports', fromOne);
    expect({ status: passed.status, code: (passed.body as { code: string }).code }).toEqual({
      status: 404,
      code: 'ERR10007',
    });
  });

  it('an issuer not listed is ERR10000 with no request to any key server; a wrong audience too', async () => {
    const before = [await keyRequests(one), await keyRequests(two)];
    const primary = devSigningKey('100');
    const strangers = [
      // Signed by a kid no key server knows: a listed issuer would have asked ONE's key server.
      mintToken(
        { ...primary, kid: 'kid-of-elsewhere' },
        { claims: { iss: 'https://evil.example' } },
      ),
      mintToken(primary, { claims: { iss: 'https://token-one.example/' } }),
      mintToken(primary, { claims: { iss: undefined } }),
      // ONE's issuer, TWO's audience.
      mintToken(primary, { claims: { iss: ONE, aud: 'urn:chain:two' } }),
    ];
    for (const token of strangers) {
      const answer = await call('/v1/data', token);
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 401, body: invalid });
    }
    expect([await keyRequests(one), await keyRequests(two)]).toEqual(before);
    await apiD.waitForLine((l) => l.includes('aud holds no accepted audience'));
    const lines = apiD.lines.filter((l) => l.includes('"token refused"'));
    expect(lines.filter((l) => l.includes('iss is not an accepted issuer'))).toHaveLength(3);
    expect(lines.filter((l) => l.includes('aud holds no accepted audience'))).toHaveLength(1);
  });
});
