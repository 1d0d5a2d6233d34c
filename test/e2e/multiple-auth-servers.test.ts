import path from 'node:path';
import {
  claimsOf,
  clientCredentialsToken,
  startTokenServer,
  tokenRequestCounts,
  tokenServerYml,
  type TokenServerProcess,
  CERTS,
  ROOT,
  configDir,
  startService,
  type ServiceProcess,
  at,
  jsonLines,
  httpsRequest,
} from '@chain/testkit';

// light-4j's multipleAuthServers, everything real: a service of its own calls two downstreams,
// api-d and the petstore, whose tokens come from two token server processes (each its own
// issuer and signing key), each with its own client, scope and cache.
vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

const ONE = 'https://token-one.example';
/** The petstore's tokens live 5 s, so that one can expire while its token server is down. */
const PETS_TOKEN_S = 5;
const TWO = 'https://token-two.example';

/** A token server of its own: issuer, signing key and clients. */
const tokenServer = (issuer: string, signing: 'primary' | 'secondary', clients: string) =>
  startTokenServer({
    yml: tokenServerYml(`issuer: ${issuer}\n`).replace(
      /signing:\n {2}kid: '100'\n {2}keyFile: .*\n/,
      `signing:\n  kid: '${signing === 'primary' ? '100' : '101'}'\n  keyFile: ${CERTS}/${signing}.key\n`,
    ),
    files: { 'clients.yml': `clients:\n${clients}` },
  });

/** A downstream that trusts one token server only: its kid's certificate and its issuer. */
const downstreamFiles = (serviceId: string, kid: '100' | '101', issuer: string) => ({
  'server.yml': `serviceId: ${serviceId}\nip: 127.0.0.1\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`,
  'security.yml': `enableVerifyJwt: true
logJwtToken: false
logClientUserScope: true
jwt:
  certificate:
    '${kid}': ${CERTS}/${kid === '100' ? 'primary' : 'secondary'}.crt
`,
  'client.yml': `tls:
  trustStore: ${CERTS}/ca.crt
oauth:
  key:
    audience: urn:chain:api
    issuer: ${issuer}
`,
});

describe('multipleAuthServers: two downstreams, two token servers (real processes)', () => {
  let one: TokenServerProcess;
  let two: TokenServerProcess;
  let apiD: ServiceProcess;
  let petstore: ServiceProcess;
  let fanout: ServiceProcess;

  beforeAll(async () => {
    [one, two] = await Promise.all([
      tokenServer(ONE, 'primary', '  fanout-d: { secret: fanout-d-secret, scope: [api_d.r] }\n'),
      tokenServer(
        TWO,
        'secondary',
        `  fanout-pets: { secret: fanout-pets-secret, scope: [read:pets], tokenLifetimeSeconds: ${PETS_TOKEN_S} }\n`,
      ),
    ]);
    [apiD, petstore] = await Promise.all([
      startService('api-d', {
        configDir: configDir(downstreamFiles('com.networknt.apid-1.0.0', '100', ONE)),
      }),
      startService('petstore', {
        configDir: configDir(downstreamFiles('com.networknt.petstore-1.0.0', '101', TWO)),
      }),
    ]);
    fanout = await startService('fanout', {
      script: path.join(ROOT, 'test', 'fixtures', 'fanout', 'index.mjs'),
      configDir: configDir({
        'client.yml': `tls:
  trustStore: ${CERTS}/ca.crt
request:
  timeout: 2000
pathPrefixServices:
  /v1/data: com.networknt.apid-1.0.0
  /v2/pet: com.networknt.petstore-1.0.0
oauth:
  multipleAuthServers: true
  token:
    tokenRenewBeforeExpired: 0
    expiredRefreshRetryDelay: 500
    client_credentials:
      uri: /oauth2/token
      serviceIdAuthServers:
        com.networknt.apid-1.0.0:
          server_url: ${one.tokenUrl}
          client_id: fanout-d
          client_secret: fanout-d-secret
          scope: [api_d.r]
        com.networknt.petstore-1.0.0:
          server_url: ${two.tokenUrl}
          client_id: fanout-pets
          client_secret: \${FANOUT_PETS_SECRET}
          scope: [read:pets]
`,
      }),
      env: {
        API_D_URL: `https://localhost:${apiD.port}`,
        PETSTORE_URL: `https://localhost:${petstore.port}`,
        FANOUT_PETS_SECRET: 'fanout-pets-secret',
      },
    });
  });

  afterAll(async () => {
    await Promise.all([one, two, apiD, petstore, fanout].filter(Boolean).map((p) => p.stop()));
  });

  it('each downstream gets the token of its own auth server; 20 calls cost one token request at each', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        httpsRequest(`https://localhost:${fanout.port}/v1/fanout`, {
          headers: { 'X-Correlation-Id': `fanout-${i}` },
        }),
      ),
    );
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body).toEqual({
        data: ['API D: Message 1', 'API D: Message 2'],
        pet: expect.objectContaining({ id: 1 }),
      });
    }
    expect(await tokenRequestCounts(one.tokenUrl)).toEqual({ 'fanout-d': 1 });
    expect(await tokenRequestCounts(two.tokenUrl)).toEqual({ 'fanout-pets': 1 });
    // Each downstream verified the client of its own auth server, with that server's scope.
    await apiD.waitForLine((l) => l.includes('"correlationId":"fanout-19"'));
    await petstore.waitForLine((l) => l.includes('"correlationId":"fanout-19"'));
    const audit = (p: ServiceProcess) =>
      new Set(
        jsonLines(p)
          .filter((l) => l.msg === 'jwt verified')
          .map((l) => `${String(l.client_id)} ${String(l.scope)}`),
      );
    expect(audit(apiD)).toEqual(new Set(['fanout-d api_d.r']));
    expect(audit(petstore)).toEqual(new Set(['fanout-pets read:pets']));
    // No secret in the fan-out service's log (one came from the environment).
    expect(fanout.lines.join('\n')).not.toMatch(/fanout-(d|pets)-secret/);
  });

  it('the two auth servers are really two: a token of one is refused by the other downstream', async () => {
    const fromOne = await clientCredentialsToken(one.tokenUrl, 'fanout-d', 'fanout-d-secret');
    const fromTwo = await clientCredentialsToken(two.tokenUrl, 'fanout-pets', 'fanout-pets-secret');
    expect(claimsOf(fromOne).iss).toBe(ONE);
    expect(claimsOf(fromTwo).iss).toBe(TWO);
    const pet = await httpsRequest(`https://localhost:${petstore.port}/v2/pet/1`, {
      headers: { Authorization: `Bearer ${fromOne}` },
    });
    expect(pet.body).toMatchObject({ statusCode: 401, code: 'ERR10000' });
    const data = await httpsRequest(`https://localhost:${apiD.port}/v1/data`, {
      headers: { Authorization: `Bearer ${fromTwo}` },
    });
    expect(data.body).toMatchObject({ statusCode: 401, code: 'ERR10000' });
  });

  it("one auth server down: once its token expires that downstream's call is ERR10009 in time; the other server is not asked", async () => {
    const issued = jsonLines(two).find(
      (l) => l.msg === 'token issued' && l.clientId === 'fanout-pets',
    );
    await two.stop();
    const before = await tokenRequestCounts(one.tokenUrl);
    // While the petstore's token is fresh, the fan-out still answers.
    expect((await httpsRequest(`https://localhost:${fanout.port}/v1/fanout`)).status).toBe(200);
    await at((issued!.expiresAt as number) + 100);
    const started = Date.now();
    const failed = await httpsRequest(`https://localhost:${fanout.port}/v1/fanout`);
    expect(Date.now() - started).toBeLessThan(2000);
    expect({ status: failed.status, body: failed.body }).toEqual({
      status: 408,
      body: {
        statusCode: 408,
        code: 'ERR10009',
        message: 'CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
        description: 'Could not get client credentials token in client module',
      },
    });
    expect(await tokenRequestCounts(one.tokenUrl)).toEqual(before);
  });
});
