import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import * as YAML from 'yaml';
import { ConfigLoader } from '@chain/config';
import { loadDownstreamConfig, type ChainLetter } from '@chain/chain';
import { loadServiceConfig } from '@chain/runtime';
import { loadTokenServerConfig } from '../../services/token-server/src/token-server-config.js';
import {
  args,
  COMPOSE_FILES,
  composeCerts,
  configFolder,
  dockerComposeConfig,
  parseYaml,
  readCompose,
  readDockerfile,
  type ComposeFile,
  type ComposeService,
  ROOT,
} from '@chain/testkit';

// The compose files without a Docker engine: docker-compose validates both files, and the
// files, the Dockerfiles and the externalized config folders agree with each other and with
// the build. test/containers builds and runs them on a real engine.
vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

const APP = ['api-a', 'api-b', 'api-c', 'api-d'];
const INFRA = ['oauth2-token', 'oauth2-key', 'influxdb', 'petstore', 'redis'];

let app: ComposeFile;
let infra: ComposeFile;
let all: ComposeService[];
const built = () => all.filter((s) => s.dockerfile !== undefined);
const byName = (name: string) => all.find((s) => s.name === name);
/** services/<folder>/Dockerfile -> <folder> */
const serviceFolder = (s: ComposeService) => path.basename(path.dirname(s.dockerfile!));

beforeAll(() => {
  composeCerts();
  app = readCompose(COMPOSE_FILES.app);
  infra = readCompose(COMPOSE_FILES.infra);
  all = [...app.services, ...infra.services];
});

describe('docker-compose -f <file> config (Debian docker-compose v1, no engine)', () => {
  it.each(Object.entries(COMPOSE_FILES))('%s: valid, and read as written', (_, file) => {
    // Throws (with docker-compose's message) on an invalid file.
    const normalized = dockerComposeConfig(file);
    // As written, but for the environment's values, which docker-compose interpolates.
    const sorted = (c: ComposeFile) =>
      [...c.services]
        .sort((x, y) => x.name.localeCompare(y.name))
        .map((service) => ({ ...service, environment: Object.keys(service.environment).sort() }));
    expect(sorted(normalized)).toEqual(sorted(readCompose(file)));
    expect(normalized.networks).toEqual({ localnet: { external: true, name: 'localnet' } });
  });
});

describe('docker-compose-app.yml', () => {
  it('has version 3.8, services api-a ... api-d and the external network localnet', () => {
    // `version` as light-4j's example file has it: Compose v2 ignores it (with a warning), and
    // v1.29 reads the file the same without it (compose-spec.test.ts).
    expect(app.version).toBe('3.8');
    expect(infra.version).toBe('3.8');
    expect(app.services.map((s) => s.name)).toEqual(APP);
    expect(app.networks).toEqual({ localnet: { external: true, name: 'localnet' } });
    expect(infra.networks).toEqual({ localnet: { external: true, name: 'localnet' } });
  });

  it('each service: built with its Dockerfile, 744x:744x, on localnet, its own folder at /config', () => {
    app.services.forEach((s, i) => {
      expect(s).toEqual({
        name: s.name,
        context: ROOT,
        dockerfile: `services/${s.name}/Dockerfile`,
        image: undefined,
        ports: [{ published: 7441 + i, target: 7441 + i }],
        networks: ['localnet'],
        volumes: [{ source: path.join(ROOT, 'config', s.name, 'config'), target: '/config' }],
        environment: {},
      });
    });
  });
});

describe('docker-compose-infra.yml', () => {
  it('token server, key server, InfluxDB 1.x and the petstore on localnet', () => {
    expect(infra.services.map((s) => s.name).sort()).toEqual([...INFRA].sort());
    for (const s of infra.services) expect(s.networks).toEqual(['localnet']);
    expect(byName('influxdb')).toMatchObject({
      image: 'influxdb:1.8',
      ports: [{ published: 8086, target: 8086 }],
    });
    // Only with `--profile redis`, for services whose config names it; not on the host.
    expect(byName('redis')).toMatchObject({ image: 'redis:7', ports: [] });
    const raw = parseYaml(fs.readFileSync(COMPOSE_FILES.infra, 'utf8')) as {
      services: Record<string, { profiles?: string[] }>;
    };
    expect(raw.services.redis.profiles).toEqual(['redis']);
    // One image, one config folder: both sign and serve the same keys.
    const [token, key] = [byName('oauth2-token')!, byName('oauth2-key')!];
    expect(token.dockerfile).toBe('services/token-server/Dockerfile');
    expect(key.dockerfile).toBe(token.dockerfile);
    expect(configFolder(key)).toBe(configFolder(token));
  });
});

describe('InfluxDB is (healthy) when ps shows it, as the docs ask to wait for', () => {
  // influxdb:1.8 has no HEALTHCHECK of its own; its image is buildpack-deps' curl variant.
  it('has a healthcheck that asks /ping (204 without credentials) with curl, as docker-compose reads it', () => {
    const raw = YAML.parse(
      execFileSync('docker-compose', ['-f', COMPOSE_FILES.infra, 'config'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    expect(raw.services.influxdb.healthcheck).toEqual({
      test: ['CMD', 'curl', '--fail', '--silent', 'http://localhost:8086/ping'],
      interval: '5s',
      timeout: '3s',
      retries: 12,
    });
  });
});

describe('every built service', () => {
  it('has a Dockerfile and an existing config folder mounted at /config', () => {
    expect(built().map((s) => s.name)).toEqual([...APP, 'oauth2-token', 'oauth2-key', 'petstore']);
    for (const s of built()) {
      expect(fs.existsSync(path.join(s.context!, s.dockerfile!))).toBe(true);
      expect(fs.statSync(configFolder(s)!).isDirectory()).toBe(true);
      expect(configFolder(s)).toBe(path.join(ROOT, 'config', serviceFolder(s), 'config'));
    }
  });

  it('publishes the port its config folder makes it listen on (loaded as the service loads it)', () => {
    for (const s of built()) {
      const bundledDir = path.join(ROOT, 'services', serviceFolder(s), 'config');
      const options = { bundledDir, overrideDir: configFolder(s), env: {} };
      if (serviceFolder(s) === 'token-server') {
        const { server } = loadTokenServerConfig(new ConfigLoader(options));
        const port = s.name === 'oauth2-token' ? server.tokenPort : server.keyPort;
        expect(s.ports).toEqual([{ published: port, target: port }]);
      } else {
        const { server, security } = loadServiceConfig(options);
        expect(s.ports).toEqual([{ published: server.httpsPort, target: server.httpsPort }]);
        expect(server.ip).toBe('0.0.0.0');
        expect(security.enableVerifyJwt).toBe(true);
        expect(security.enableMockJwt).toBe(false);
        // Every file a key points to is inside the mounted folder.
        for (const f of [server.keyFile, server.certFile]) {
          expect(f!.startsWith(configFolder(s)! + path.sep)).toBe(true);
        }
      }
    }
  });
});

describe('hosts in the compose config folders', () => {
  /** Container port of a compose service (the port other containers reach it on). */
  const portsOf = (name: string) => byName(name)?.ports.map((p) => p.target);

  /**
   * A YAML file's text without its clients' `redirectUri` entries (clients.yml): where a
   * browser goes with its authorization code, and without security.yml's `dpop.origins`: where
   * clients reach the service (published on the host too); never an address a service calls.
   */
  const calledText = (file: string) =>
    fs
      .readFileSync(file, 'utf8')
      .replace(/^(\s*)redirectUri:[^\n]*(\n\1\s+- [^\n]*)*/gm, '$1redirectUri: (browser)')
      .replace(/^(\s*)origins:[^\n]*(\n\1\s+- [^\n]*)*/gm, '$1origins: (clients)');

  /** Every `scheme://host:port` in every YAML file of the folder, parsed as the file says. */
  const urlsIn = (dir: string): { file: string; host: string; port: number }[] =>
    fs
      .readdirSync(dir)
      .filter((f) => /\.ya?ml$/.test(f))
      .flatMap((f) =>
        [...calledText(path.join(dir, f)).matchAll(/\bhttps?:\/\/[^\s'"]+/g)].map(([u]) => {
          const url = new URL(u);
          return { file: f, host: url.hostname, port: Number(url.port) };
        }),
      );

  it('every URL names a compose service of the two files, with its port', () => {
    let count = 0;
    for (const s of built()) {
      for (const { file, host, port } of urlsIn(configFolder(s)!)) {
        count++;
        expect({ file, host, ports: portsOf(host) }).toEqual({
          file,
          host,
          ports: expect.arrayContaining([port]),
        });
      }
    }
    // a, b, c: token, key, downstream, accepted issuer; d: token, key, accepted issuer;
    // petstore: key, accepted issuer; token server: issuer.
    expect(count).toBe(3 * 4 + 3 + 2 + 1 * 2);
  });

  it('the chain, the token and key clients and the metrics point at compose names', () => {
    const letters: ChainLetter[] = ['A', 'B', 'C', 'D'];
    letters.forEach((letter, i) => {
      const dir = configFolder(byName(APP[i])!)!;
      const options = { bundledDir: path.join(ROOT, 'services', APP[i], 'config'), env: {} };
      const { client, metrics, secret, loader } = loadServiceConfig({
        ...options,
        overrideDir: dir,
      });
      expect(loadDownstreamConfig(loader, letter)).toEqual(
        letter === 'D'
          ? undefined
          : { name: APP[i + 1], host: `https://${APP[i + 1]}:${7442 + i}`, path: '/v1/data' },
      );
      expect(client.oauth.token.server_url).toBe('https://oauth2-token:6882');
      expect(client.oauth.key.server_url).toBe('https://oauth2-key:6886');
      expect(client.tls).toMatchObject({ verifyHostname: true, loadTrustStore: true });
      expect(client.tls.trustStore).toBe(path.join(dir, 'certs', 'ca.crt'));
      expect(metrics).toMatchObject({ enabled: true, influxdbHost: 'influxdb' });
      expect(portsOf(metrics.influxdbHost)).toContain(metrics.influxdbPort);
      // secret.yml comes from scripts/compose-certs.sh: the token server's development secret.
      expect(secret.clientCredentialsClientSecret).toBe(`${APP[i]}-secret`);
    });
  });

  it('the petstore reports metrics to the same InfluxDB, with the same database and user', () => {
    const folder = (name: string) => ({
      bundledDir: path.join(ROOT, 'services', serviceFolder(byName(name)!), 'config'),
      overrideDir: configFolder(byName(name)!),
      env: {},
    });
    const { metrics } = loadServiceConfig(folder('petstore'));
    const chain = loadServiceConfig(folder('api-a')).metrics;
    expect(metrics).toEqual({ ...chain });
    expect(metrics).toMatchObject({ enabled: true, influxdbHost: 'influxdb' });
    // What the infra file gives the InfluxDB container.
    const env = byName('influxdb')!.environment;
    expect(env).toMatchObject({
      INFLUXDB_DB: metrics.influxdbName,
      INFLUXDB_HTTP_AUTH_ENABLED: 'true',
      INFLUXDB_ADMIN_USER: metrics.influxdbUser,
      // The password's default, unless INFLUXDB_PASS is set for `up`.
      INFLUXDB_ADMIN_PASSWORD: `\${INFLUXDB_PASS:-${metrics.influxdbPass}}`,
    });
  });

  it("a DPoP proof names the service's own origins: its compose name and the published port", () => {
    let count = 0;
    for (const s of built().filter((b) => serviceFolder(b) !== 'token-server')) {
      const { security } = loadServiceConfig({
        bundledDir: path.join(ROOT, 'services', serviceFolder(s), 'config'),
        overrideDir: configFolder(s),
        env: {},
      });
      const [port] = portsOf(s.name)!;
      expect({ name: s.name, origins: security.dpop.origins }).toEqual({
        name: s.name,
        origins: [`https://${s.name}:${port}`, `https://localhost:${port}`],
      });
      count++;
    }
    expect(count).toBe(5); // api-a ... api-d, the petstore
  });

  it('no folder names localhost or a loopback address', () => {
    for (const s of built()) {
      for (const f of fs.readdirSync(configFolder(s)!).filter((f) => f.endsWith('.yml'))) {
        const text = calledText(path.join(configFolder(s)!, f));
        expect({ f, text }).toEqual({ f, text: expect.not.stringMatching(/localhost|127\.0\./) });
      }
    }
  });
});

describe('Dockerfiles', () => {
  const dockerignore = fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');

  it('.dockerignore keeps build output, tests, certificates, keys and every secret out', () => {
    expect(dockerignore).toEqual(
      expect.arrayContaining([
        '**/node_modules',
        '**/dist',
        '**/*.tsbuildinfo',
        '**/test',
        'certs',
        'config',
        '**/*.key',
        '**/*.pem',
        '**/secret.yml',
        'services/token-server/config/clients.yml',
        'services/token-server/config/users.yml',
      ]),
    );
    // The bundled secrets exist (the local run uses them), so the patterns are not idle.
    expect(fs.existsSync(path.join(ROOT, 'services', 'api-a', 'config', 'secret.yml'))).toBe(true);
    for (const file of ['clients.yml', 'users.yml']) {
      expect(fs.existsSync(path.join(ROOT, 'services', 'token-server', 'config', file))).toBe(true);
    }
  });

  it('every Dockerfile is what scripts/dockerfiles.mjs makes from the one template', () => {
    // Throws (naming the stale files) when one differs.
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'dockerfiles.mjs'), '--check'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  });

  it.each(['api-a', 'api-b', 'api-c', 'api-d', 'petstore', 'token-server'])(
    '%s: copies only paths that exist and are not ignored, and runs what the build emits',
    (folder) => {
      const { instructions, final } = readDockerfile(
        path.join(ROOT, 'services', folder, 'Dockerfile'),
      );
      const pkg = JSON.parse(
        fs.readFileSync(path.join(ROOT, 'services', folder, 'package.json'), 'utf8'),
      ) as { name: string; main: string };

      // No `# syntax=` directive: BuildKit would fetch a frontend image from a registry.
      expect(
        fs.readFileSync(path.join(ROOT, 'services', folder, 'Dockerfile'), 'utf8'),
      ).not.toMatch(/^#\s*syntax\s*=/im);
      // Multi-stage: the workspace installed from the lockfile and compiled, then pnpm deploy of
      // this very package, run from a slim Node 24.
      expect(args(instructions, 'FROM')).toEqual(['node:24-slim AS build', 'node:24-slim']);
      const run = args(instructions, 'RUN');
      expect(run).toEqual(
        expect.arrayContaining([
          'pnpm fetch',
          'pnpm install --offline --frozen-lockfile',
          'pnpm exec tsc -b && pnpm exec rolldown -c rolldown.config.mjs',
        ]),
      );
      expect(run[run.length - 1]).toMatch(
        new RegExp(`^pnpm --filter ${pkg.name} deploy --prod --offline .* /out `),
      );
      for (const source of args(instructions, 'COPY')
        .filter((a) => !a.startsWith('--from'))
        .flatMap((a) => a.split(/\s+/).slice(0, -1))) {
        expect({ source, exists: fs.existsSync(path.join(ROOT, source)) }).toEqual({
          source,
          exists: true,
        });
        expect(dockerignore).not.toContain(source);
      }

      // The image that runs: non-root, /config, its ports, a health check on them, the build's entry.
      expect(args(final, 'COPY')).toEqual(['--from=build /out ./']);
      expect(args(final, 'WORKDIR')).toEqual(['/app']);
      expect(args(final, 'USER')).toEqual(['node']);
      expect(args(final, 'ENV').join(' ')).toMatch(/\bCONFIG_DIR=\/config\b/);
      expect(args(final, 'ENV').join(' ')).toMatch(/\bNODE_ENV=production\b/);
      const exposed = args(final, 'EXPOSE').flatMap((a) => a.split(/\s+/).map(Number));
      const composePorts = built()
        .filter((s) => serviceFolder(s) === folder)
        .flatMap((s) => s.ports.map((p) => p.target));
      expect(exposed).toEqual(expect.arrayContaining(composePorts));
      expect(composePorts.length).toBeGreaterThan(0);
      const [health] = args(final, 'HEALTHCHECK');
      // The runtime's services: server.yml probePort's port when the environment names it.
      const port =
        folder === 'token-server' ? exposed[0] : `process.env.SERVER_PROBEPORT||${exposed[0]}`;
      expect(health).toContain(`port:${port},path:'/health'`);
      const cmd = JSON.parse(args(final, 'CMD')[0]) as string[];
      // Node with the services' V8 flags, as pnpm start and the bench run them.
      expect(cmd).toEqual(['node', '--max-semi-space-size=8', pkg.main]);
      // `pnpm -r build` emitted that very file (deploy copies the package folder to /app).
      expect(fs.existsSync(path.join(ROOT, 'services', folder, pkg.main))).toBe(true);
    },
  );

  describe('the health check, run by node as the image runs it', () => {
    let server: https.Server;
    let status = 200;
    const [health] = args(
      readDockerfile(path.join(ROOT, 'services', 'api-a', 'Dockerfile')).final,
      'HEALTHCHECK',
    );
    const cmd = JSON.parse(health.replace(/^.*?CMD\s+/, '')) as string[];
    /** Runs the check against `port` (the image's own port swapped for a free one). */
    const check = (port: number, env: NodeJS.ProcessEnv = {}) =>
      new Promise<number | null>((resolve) => {
        const child = execFile(
          cmd[0] === 'node' ? process.execPath : cmd[0],
          [...cmd.slice(1, -1), cmd[cmd.length - 1].replace('||7441,', `||${port},`)],
          { env: { PATH: process.env.PATH, ...env } },
        );
        child.once('exit', resolve);
      });

    beforeAll(async () => {
      const certs = path.join(ROOT, 'certs');
      server = https.createServer(
        {
          key: fs.readFileSync(path.join(certs, 'server.key')),
          cert: fs.readFileSync(path.join(certs, 'server.crt')),
        },
        (req, res) => {
          res.statusCode = req.url === '/health' ? status : 404;
          res.end();
        },
      );
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('exits 0 on 200, 1 on any other status and 1 when nothing listens', async () => {
      expect(cmd.slice(0, 2)).toEqual(['node', '-e']);
      const port = (server.address() as AddressInfo).port;
      expect(await check(port)).toBe(0);
      status = 503;
      expect(await check(port)).toBe(1);
      await new Promise<void>((r) => server.close(() => r()));
      expect(await check(port)).toBe(1);
      server.listen(0, '127.0.0.1');
    });

    it('checks the port of SERVER_PROBEPORT when the environment names one (two-way TLS)', async () => {
      status = 200;
      if (!server.listening) await new Promise((r) => server.once('listening', r));
      const port = (server.address() as AddressInfo).port;
      const closed = net.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const nothing = (closed.address() as AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      expect(await check(nothing)).toBe(1);
      expect(await check(nothing, { SERVER_PROBEPORT: String(port) })).toBe(0);
    });
  });
});
