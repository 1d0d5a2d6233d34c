import fs from 'node:fs';
import path from 'node:path';
import {
  CERTS,
  configDir,
  createSigningKey,
  devSigningKey,
  freePort,
  httpsRequest,
  jwtSecurityYml,
  mintToken,
  PET_1,
  serverYml,
  startService,
  writeCertificate,
  type Answer,
  type ServiceProcess,
} from '@chain/testkit';

// SIGHUP and POST /adm/modules on the built petstore (real processes over HTTPS): a valid change
// of security.yml or client.yml holds for the next request with none failed under load, a
// broken file changes nothing and is named, and the endpoint wants a token with its scope.
vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

const primary = devSigningKey('100');
const newKey = createSigningKey('k9');
const newCert = writeCertificate(newKey);
const token = (scope: string[], options: { key?: typeof primary; aud?: string } = {}) =>
  mintToken(options.key ?? primary, {
    scope,
    claims: options.aud ? { aud: options.aud } : {},
  });
const READER = token(['read:pets']);
const ADMIN = token(['admin']);

const security = (extra: Record<string, string | boolean> = {}) =>
  jwtSecurityYml({ scope: true, kids: ['100'], keys: extra });
const clientYml = (keyServer: string, audience: string) => `tls:
  trustStore: ${CERTS}/ca.crt
request:
  timeout: 500
oauth:
  key:
    server_url: ${keyServer}
    uri: /oauth2/key
    client_id: petstore-client
    audience: ${audience}
`;

interface Setup {
  dir: string;
  petstore: ServiceProcess;
  keyServer: string;
}

async function start(workers = 1): Promise<Setup> {
  const keyServer = `https://127.0.0.1:${await freePort()}`; // nothing listens: unknown kids fail
  const dir = configDir({
    'server.yml': serverYml('reload', workers > 1 ? { workers } : {}),
    'security.yml': security(),
    'client.yml': clientYml(keyServer, 'urn:chain:api'),
    'configReload.yml': 'enabled: true\n',
    'prometheus.yml': 'enabled: true\n',
  });
  return { dir, keyServer, petstore: await startService('petstore', { configDir: dir }) };
}

const get = (s: Setup, urlPath: string, bearer?: string, method = 'GET') =>
  httpsRequest(`https://localhost:${s.petstore.port}${urlPath}`, {
    method,
    headers: bearer ? { Authorization: `Bearer ${bearer}` } : {},
  });
const pet = (s: Setup, bearer?: string) => get(s, '/v2/pet/1', bearer);
const reload = (s: Setup, bearer = ADMIN) => get(s, '/adm/modules', bearer, 'POST');
const write = (s: Setup, file: string, text: string) =>
  fs.writeFileSync(path.join(s.dir, file), text);
const summary = (a: Answer) => ({ status: a.status, body: a.body as unknown });
const catalogue = (statusCode: number, code: string, message: string, description: string) => ({
  statusCode,
  code,
  message,
  description,
});

/** The next line that matches, logged from now on. */
const nextLine = (p: ServiceProcess, match: (line: string) => boolean) => {
  const from = p.lines.length;
  return p.waitForLine((l) => match(l) && p.lines.lastIndexOf(l) >= from);
};

/** Requests 8 at a time until stopped: every answer's status. */
function load(s: Setup) {
  const statuses: number[] = [];
  let running = true;
  const loops = Array.from({ length: 8 }, async () => {
    while (running) statuses.push((await pet(s, READER)).status);
  });
  return {
    statuses,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return statuses;
    },
  };
}

describe('configuration reloaded (one process)', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await start();
  });
  afterAll(() => s.petstore.stop());

  it('a valid change of security.yml and client.yml holds for the next request, none failed meanwhile', async () => {
    const other = token(['other']);
    const foreign = token(['read:pets'], { aud: 'urn:other' });
    const signedByNew = token(['read:pets'], { key: newKey });
    // Before: what each change is about to allow is refused.
    expect(summary(await pet(s, other))).toMatchObject({ status: 403, body: { code: 'ERR10005' } });
    expect(summary(await pet(s))).toMatchObject({ status: 401, body: { code: 'ERR10002' } });
    expect(summary(await pet(s, foreign))).toMatchObject({
      status: 401,
      body: { code: 'ERR10000' },
    });
    expect((await pet(s, signedByNew)).status).toBe(503); // kid k9: the key server is not there
    const ready = await get(s, '/ready');
    expect(ready.body).toEqual({
      status: 'UP',
      serviceId: 'reload',
      config: { generation: 1, hash: expect.stringMatching(/^[0-9a-f]{16}$/) },
    });
    const startHash = (ready.body as { config: { hash: string } }).config.hash;

    const running = load(s);
    write(
      s,
      'security.yml',
      jwtSecurityYml({
        kids: ['100'],
        certificates: `    k9: ${newCert}\n`,
        keys: { enableVerifyScope: false },
        extra: 'skipPathPrefixes: [/v2/pet]\n',
      }),
    );
    write(s, 'client.yml', clientYml(s.keyServer, '[urn:chain:api, urn:other]'));
    const answer = await reload(s);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ generation: 2, hash: expect.stringMatching(/^[0-9a-f]{16}$/) });
    const { hash } = answer.body as { hash: string };
    expect(hash).not.toBe(startHash);
    // The next requests: the scope no longer checked, the path skipped, the key and audience new.
    expect(summary(await pet(s, other))).toEqual({ status: 200, body: PET_1 });
    expect(summary(await pet(s))).toEqual({ status: 200, body: PET_1 });
    expect(summary(await pet(s, foreign))).toEqual({ status: 200, body: PET_1 });
    expect(summary(await pet(s, signedByNew))).toEqual({ status: 200, body: PET_1 });
    const statuses = await running.stop();
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((st) => st !== 200)).toEqual([]);

    expect((await get(s, '/ready')).body).toEqual({
      status: 'UP',
      serviceId: 'reload',
      config: { generation: 2, hash },
    });
    expect((await get(s, '/metrics')).text).toContain(`config_generation{hash="${hash}"} 2\n`);
    await s.petstore.waitForLine((l) => l.includes('"msg":"configuration reloaded"'));
  });

  it.each([
    ['bad YAML', 'enableVerifyJwt: [true\n', undefined, /^not valid YAML \(line \d+\)/],
    [
      'an unknown key',
      `${security()}enableVerifyJwtt: true\n`,
      'enableVerifyJwtt',
      /^unknown key; did you mean "enableVerifyJwt"\?$/,
    ],
    [
      'a certificate that does not exist',
      jwtSecurityYml({ kids: ['100'], certificates: `    k9: ${CERTS}/missing.crt\n` }),
      'jwt.certificate.k9',
      /^file not found: .*missing\.crt$/,
    ],
  ])(
    '%s in security.yml: 400 naming file, key and reason; one log line; the old config serves',
    async (_what, text, key, reason) => {
      const before = await get(s, '/ready');
      write(s, 'security.yml', text);
      const file = path.join(s.dir, 'security.yml');
      const logged = nextLine(s.petstore, (l) => l.includes('configuration not reloaded'));
      const answer = await reload(s);
      expect(answer.status).toBe(400);
      const { description } = answer.body as { description: string };
      expect(answer.body).toEqual(catalogue(400, 'ERR20018', 'CONFIG_RELOAD_REFUSED', description));
      const why = `${file}${key ? ` ${key}` : ''}: `;
      expect(
        description.startsWith(`The configuration in use stays, a file is refused: ${why}`),
      ).toBe(true);
      expect(description.slice(description.indexOf(why) + why.length)).toMatch(reason);
      const line = JSON.parse(await logged) as Record<string, unknown>;
      expect(line).toMatchObject({ level: 50, file, msg: expect.stringContaining(why) });
      if (key) expect(line.key).toBe(key);
      // Still the configuration of generation 2: a path skipped, any scope.
      expect(summary(await pet(s))).toEqual({ status: 200, body: PET_1 });
      expect((await get(s, '/ready')).body).toEqual(before.body);
    },
  );

  it('on SIGHUP too: a broken file is named in one line, a fixed one is applied, server.yml waits for a restart', async () => {
    write(s, 'security.yml', 'enableVerifyJwt: [true\n');
    const refused = nextLine(s.petstore, (l) => l.includes('configuration not reloaded'));
    process.kill(s.petstore.pid, 'SIGHUP');
    const line = await refused;
    expect(line).toContain('not valid YAML');
    expect(JSON.parse(line)).toMatchObject({ level: 50, file: path.join(s.dir, 'security.yml') });
    write(s, 'security.yml', security());
    // server.yml is read and checked, not applied: the listeners stay until a restart.
    write(s, 'server.yml', serverYml('reload', { shutdownTimeoutMs: 4000 }));
    const serverLine = nextLine(s.petstore, (l) => l.includes('server.yml'));
    process.kill(s.petstore.pid, 'SIGHUP');
    await s.petstore.waitForLine((l) => l.includes('"generation":3'));
    expect(JSON.parse(await serverLine)).toMatchObject({
      level: 40,
      file: path.join(s.dir, 'server.yml'),
      msg: 'server.yml: changes take effect at a restart only',
    });
    // security.yml as at start: no token is 401 again.
    expect(summary(await pet(s))).toMatchObject({ status: 401, body: { code: 'ERR10002' } });
  });

  it('the endpoint refuses a request without a token, with a token without its scope, and a GET', async () => {
    const none = await reload(s, '');
    expect(summary(none)).toEqual({
      status: 401,
      body: catalogue(
        401,
        'ERR10002',
        'MISSING_AUTH_TOKEN',
        'No Authorization header or the token is not bearer type',
      ),
    });
    expect(none.headers['www-authenticate']).toMatch(/^Bearer /);
    const reader = await reload(s, READER);
    expect(summary(reader)).toEqual({
      status: 403,
      body: catalogue(
        403,
        'ERR10005',
        'AUTH_TOKEN_SCOPE_MISMATCH',
        'Scopes [read:pets] in authorization token and specification scopes [admin] are not matched',
      ),
    });
    const read = await get(s, '/adm/modules', ADMIN);
    expect({ status: read.status, allow: read.headers.allow }).toEqual({
      status: 405,
      allow: 'POST',
    });
    expect((await get(s, '/ready')).body).toMatchObject({ config: { generation: 3 } });
  });
});

describe('configuration reload off (the default)', () => {
  it('POST /adm/modules answers 404 ERR20017, and SIGHUP still reloads', async () => {
    const dir = configDir({ 'server.yml': serverYml('reload-off'), 'security.yml': security() });
    const petstore = await startService('petstore', { configDir: dir });
    try {
      const answer = await httpsRequest(`https://localhost:${petstore.port}/adm/modules`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN}` },
      });
      expect(summary(answer)).toEqual({
        status: 404,
        body: catalogue(
          404,
          'ERR20017',
          'ENDPOINT_NOT_ENABLED',
          'Request path /adm/modules is served by this service but not enabled: configReload.yml enabled: true turns it on',
        ),
      });
      fs.writeFileSync(path.join(dir, 'security.yml'), 'enableVerifyJwt: false\n');
      process.kill(petstore.pid, 'SIGHUP');
      await petstore.waitForLine((l) => l.includes('"msg":"configuration reloaded"'));
      const open = await httpsRequest(`https://localhost:${petstore.port}/v2/pet/1`);
      expect(summary(open)).toEqual({ status: 200, body: PET_1 });
    } finally {
      await petstore.stop();
    }
  });
});

describe('configuration reloaded with two workers', () => {
  it('SIGHUP to the primary, or the endpoint at one worker: every worker reloads, every next request has the change', async () => {
    const s = await start(2);
    try {
      expect(summary(await pet(s))).toMatchObject({ status: 401 });
      const running = load(s);
      write(s, 'security.yml', `${security()}skipPathPrefixes: [/v2/pet]\n`);
      process.kill(s.petstore.pid, 'SIGHUP');
      const reloaded = () =>
        s.petstore.lines.filter((l) => l.includes('"msg":"configuration reloaded"')).length;
      await s.petstore.waitForLine((l) => l.includes('"msg":"configuration reloaded"'));
      await s.petstore.waitForLine(
        (l) => l.includes('"msg":"configuration reloaded"') && reloaded() === 2,
      );
      const after = await Promise.all(Array.from({ length: 8 }, () => pet(s)));
      expect(after.map((a) => a.status)).toEqual(Array(8).fill(200));
      // At the endpoint, which one worker answers: that one reloads, then the other.
      write(s, 'security.yml', security());
      expect(await reload(s)).toMatchObject({ status: 200, body: { generation: 3 } });
      await s.petstore.waitForLine(
        (l) => l.includes('"msg":"configuration reloaded"') && reloaded() === 4,
      );
      const closed = await Promise.all(Array.from({ length: 8 }, () => pet(s)));
      expect(closed.map((a) => a.status)).toEqual(Array(8).fill(401));
      expect((await running.stop()).filter((st) => st !== 200)).toEqual([]);
    } finally {
      await s.petstore.stop();
    }
  });
});
