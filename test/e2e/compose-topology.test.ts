import path from 'node:path';
import {
  COMPOSE_FILES,
  composeCerts,
  configFolder,
  readCompose,
  httpsRequest,
  type Answer,
  clientCredentialsToken,
  tokenRequestCounts,
  ROOT,
  startService,
  type ServiceProcess,
  EIGHT,
  ONE_CALL_TOKENS,
} from '@chain/testkit';

// The compose topology without Docker: every built service of the two compose files as a real
// process, each with CONFIG_DIR set to its compose config folder (security on, certificates
// from the folder) and listening on its compose port; compose service names resolve to a
// loopback address of their own through a test-only dns.lookup hook
// (test/support/compose-hosts.mjs, loaded with NODE_OPTIONS=--import), as Docker's DNS
// resolves them on the network. The test calls the published ports on localhost, as a user of
// the host does. In compose, oauth2-token and oauth2-key are two containers of the one
// token-server image with one config folder; here one process plays both (same ports).
// InfluxDB is not started: metrics are on and their failure is only logged.
vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

const services = [
  ...readCompose(COMPOSE_FILES.infra).services,
  ...readCompose(COMPOSE_FILES.app).services,
];
/** Each compose service name -> 127.0.0.<10+i>. */
const hosts = Object.fromEntries(services.map((s, i) => [s.name, `127.0.0.${10 + i}`]));
const MISSING = {
  statusCode: 401,
  code: 'ERR10002',
  message: 'MISSING_AUTH_TOKEN',
  description: 'No Authorization header or the token is not bearer type',
};

const running: Record<string, ServiceProcess> = {};

/** Starts the built service behind a compose service, as its container would run. */
async function up(name: string): Promise<ServiceProcess> {
  const service = services.find((s) => s.name === name)!;
  const folder = path.basename(path.dirname(service.dockerfile!));
  const proc = await startService(folder, {
    configDir: configFolder(service),
    env: {
      NODE_ENV: 'production',
      CERTS_DIR: undefined, // nothing from the development folder: only what /config holds
      NODE_OPTIONS: `--import ${path.join(ROOT, 'test', 'support', 'compose-hosts.mjs')}`,
      CHAIN_HOSTS: JSON.stringify(hosts),
    },
  });
  running[name] = proc;
  return proc;
}

const get = (port: number, p: string, headers: Record<string, string> = {}): Promise<Answer> =>
  httpsRequest(`https://localhost:${port}${p}`, { headers });

describe('the compose topology as processes: names resolved to loopback, security on', () => {
  let userToken: string;

  beforeAll(async () => {
    composeCerts();
    const tokenServer = await up('oauth2-token');
    await tokenServer.waitForLine((l) => l.includes('"endpoint":"key"'));
    await Promise.all(['petstore', 'api-d', 'api-c', 'api-b', 'api-a'].map(up));
    userToken = await clientCredentialsToken(
      'https://localhost:6882',
      'chain-user',
      'chain-user-secret',
      'api_a.r read:pets',
    );
  });

  afterAll(async () => {
    await Promise.all(Object.values(running).map((p) => p.stop()));
  });

  it('each process listens on the port compose publishes', () => {
    const published = (name: string) => services.find((s) => s.name === name)!.ports[0].target;
    for (const name of ['oauth2-token', 'petstore', 'api-a', 'api-b', 'api-c', 'api-d']) {
      expect({ name, port: running[name].port }).toEqual({ name, port: published(name) });
    }
  });

  it('api-a answers the 8 messages through api-b, api-c, api-d and the token server by name', async () => {
    const answer = await get(7441, '/v1/data', {
      Authorization: `Bearer ${userToken}`,
      'X-Correlation-Id': 'compose-1',
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.body).toEqual(EIGHT);
    // Each calling service got its own token from https://oauth2-token:6882, once.
    expect(await tokenRequestCounts('https://localhost:6882')).toEqual(ONE_CALL_TOKENS);
    // Every hop verified the user's token (the audit line of security.yml's logClientUserScope).
    for (const name of ['api-a', 'api-b', 'api-c', 'api-d']) {
      const line = await running[name].waitForLine(
        (l) => l.includes('"msg":"jwt verified"') && l.includes('"correlationId":"compose-1"'),
      );
      expect(JSON.parse(line)).toMatchObject({ client_id: 'chain-user' });
      expect(running[name].lines.join('\n')).not.toContain(userToken);
    }
  });

  it.each([
    ['api-a', 7441],
    ['api-b', 7442],
    ['api-c', 7443],
    ['api-d', 7444],
  ])('%s refuses a call without a token: 401 ERR10002', async (_, port) => {
    const answer = await get(port, '/v1/data');
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="api"');
    expect(answer.body).toEqual(MISSING);
  });

  it('the petstore of the infra file serves a pet to the same user token', async () => {
    const answer = await get(8443, '/v2/pet/1', { Authorization: `Bearer ${userToken}` });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: 1 });
    expect((await get(8443, '/v2/pet/1')).body).toEqual(MISSING);
  });

  it('every process answers /health without a token, as the HEALTHCHECK asks', async () => {
    for (const port of [6882, 6886, 8443, 7441, 7442, 7443, 7444]) {
      expect({ port, status: (await get(port, '/health')).status }).toEqual({ port, status: 200 });
    }
  });
});
