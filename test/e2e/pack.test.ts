import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import {
  CERTS,
  ROOT,
  certificateBound,
  certificateThumbprint,
  claimsOf,
  clientCredentialsToken,
  devSigningKey,
  httpsRequest,
  httpsStub,
  json,
  mintToken,
  spawnNode,
  startTokenServer,
  type ChildHandle,
  type Stub,
  type TokenServerProcess,
} from '@chain/testkit';

// The packages as a user outside this repository gets them: each public package packed as
// `pnpm publish` would (workspace:* made real versions), checked by npm's file list and publint,
// installed with npm into a project under the temporary folder (no workspace, no links), and the
// three examples (examples/) copied there, type-checked against the packed types, and run over
// HTTPS against the project's token server with a downstream that records what it is sent.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const run = promisify(execFile);
const PUBLIC = ['errors', 'config', 'security', 'http', 'oauth-client'];
const EXAMPLES = ['express', 'fastify', 'node'];
const PACKAGE_FOLDERS = ['packages', 'services'].flatMap((top) =>
  fs.readdirSync(path.join(ROOT, top)).map((name) => path.join(top, name)),
);
type Manifest = {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
};
/** The repository's TypeScript compiler. */
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const manifest = (dir: string): Manifest =>
  JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;

/** npm and pnpm without the noise; npm through this machine's CA bundle (TLS interception). */
const toolEnv: NodeJS.ProcessEnv = {
  ...process.env,
  ...(process.env.NODE_EXTRA_CA_CERTS && { npm_config_cafile: process.env.NODE_EXTRA_CA_CERTS }),
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};
const tool = async (command: string, args: string[], cwd: string) =>
  (await run(command, args, { cwd, env: toolEnv, maxBuffer: 16 * 1024 * 1024 })).stdout;

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-pack-'));
const packs = path.join(scratch, 'packs');
const project = path.join(scratch, 'project');
const packed = new Map<string, { tarball: string; manifest: Manifest }>();
const npmFiles = new Map<string, string[]>();
let typeCheck: Promise<string>;

let tokenServer: TokenServerProcess;
let downstream: Stub;
const examples = new Map<string, { child: ChildHandle; origin: string }>();

beforeAll(async () => {
  fs.mkdirSync(packs);
  // prepack is a clean build of the package (no module a deleted source left in dist). The first
  // package is packed as a user publishes it, prepack and all; the others get the same clean
  // build from one compiler for all of them (about 25 s less than a compiler each), then are
  // packed without running it again.
  const [first, ...others] = PUBLIC;
  for (const name of others) {
    for (const built of ['dist', 'tsconfig.tsbuildinfo']) {
      fs.rmSync(path.join(pkgDir(name), built), { recursive: true, force: true });
    }
  }
  await tool(process.execPath, [TSC, '-b', ...others.map(pkgDir)], ROOT);
  for (const name of PUBLIC) {
    const args = ['pack', '--pack-destination', packs, '--json'];
    const out = await tool(
      'pnpm',
      name === first ? args : [...args, '--config.ignore-scripts=true'],
      pkgDir(name),
    );
    // After what prepack printed.
    const { filename } = JSON.parse(out.slice(out.search(/^\{/m))) as { filename: string };
    const text = await tool('tar', ['-xzOf', filename, 'package/package.json'], scratch);
    packed.set(name, { tarball: filename, manifest: JSON.parse(text) as Manifest });
  }
  // npm's own list of what it would publish, side by side with the install (its prepack, the
  // clean build, was done above).
  const dryRuns = Promise.all(
    PUBLIC.map(async (name) => {
      const out = await tool(
        'npm',
        ['pack', '--dry-run', '--json', '--ignore-scripts'],
        pkgDir(name),
      );
      const [report] = JSON.parse(out) as [{ files: { path: string }[] }];
      npmFiles.set(name, report.files.map((f) => f.path).sort());
    }),
  );
  // One project for the three examples: their dependencies, @chain/* as the tarballs.
  fs.mkdirSync(project);
  const tarballs = Object.fromEntries(
    [...packed.values()].map((p) => [p.manifest.name, `file:${p.tarball}`]),
  );
  const wanted: Record<string, string> = {};
  for (const example of EXAMPLES) {
    const { dependencies = {}, devDependencies = {} } = manifest(exampleDir(example));
    Object.assign(wanted, dependencies, devDependencies);
  }
  // The type-check runs the repository's tsc (the compiler only); everything it resolves is here.
  delete wanted.typescript;
  const dependencies = { ...wanted, ...tarballs };
  const pkg = {
    name: 'pack-test',
    private: true,
    type: 'module',
    dependencies,
    overrides: tarballs,
  };
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify(pkg, null, 2));
  await tool('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], project);
  await dryRuns;
  for (const example of EXAMPLES) {
    fs.cpSync(exampleDir(example), path.join(project, example), {
      recursive: true,
      filter: (from) => !/node_modules|package-lock\.json/.test(from),
    });
  }
  // The repository's tsc (the compiler only: everything it resolves is the project's), while the
  // servers start and answer; its test awaits it.
  typeCheck = tool(process.execPath, [TSC, '-b', ...EXAMPLES], project).catch(
    (err: { stdout?: string }) => err.stdout || String(err),
  );

  tokenServer = await startTokenServer();
  downstream = await httpsStub((_req, res) => json(res, 200, { messages: ['downstream'] }));
  await Promise.all(EXAMPLES.map(startExample));
});

afterAll(async () => {
  await Promise.all([...examples.values()].map(({ child }) => child.stop()));
  await Promise.all([tokenServer?.stop(), downstream?.close()]);
  fs.rmSync(scratch, { recursive: true, force: true });
});

function pkgDir(name: string) {
  return path.join(ROOT, 'packages', name);
}
function exampleDir(name: string) {
  return path.join(ROOT, 'examples', name);
}

async function startExample(name: string) {
  const child = spawnNode(name, 'server.ts', {
    cwd: path.join(project, name),
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      CERTS_DIR: CERTS,
      CLIENT_CA: path.join(CERTS, 'clients', 'ca.crt'),
      CLIENT_SECRET: 'api-a-secret',
      TOKEN_SERVER_URL: tokenServer.tokenUrl,
      DOWNSTREAM_URL: `${downstream.url}/v1/data`,
    },
  });
  const line = await child.waitForLine((l) => l.startsWith('listening on '), 20_000);
  const port = /:(\d+)$/.exec(line)![1];
  examples.set(name, { child, origin: `https://127.0.0.1:${port}` });
}

describe('the public packages', () => {
  it('are the packages a user installs and what they need at run time; the rest stay private', () => {
    const declared = PACKAGE_FOLDERS.filter(
      (dir) => manifest(path.join(ROOT, dir)).private !== true,
    );
    expect(declared).toEqual(PUBLIC.map((name) => `packages/${name}`).sort());
    for (const name of PUBLIC) {
      const needs = Object.keys(manifest(pkgDir(name)).dependencies ?? {});
      const ours = needs.filter((dep) => dep.startsWith('@chain/'));
      expect(ours.filter((dep) => !PUBLIC.includes(dep.slice('@chain/'.length)))).toEqual([]);
    }
  });

  it.each(PUBLIC)('@chain/%s packs with real versions of the packed packages', (name) => {
    const { manifest: pkg } = packed.get(name)!;
    expect(pkg).toMatchObject({ private: false, license: 'Apache-2.0', version: '1.0.0' });
    const versions = new Map(
      [...packed.values()].map((p) => [p.manifest.name, p.manifest.version]),
    );
    const ours = Object.entries(pkg.dependencies ?? {}).filter(([dep]) =>
      dep.startsWith('@chain/'),
    );
    for (const [dep, version] of ours) expect([dep, version]).toEqual([dep, versions.get(dep)]);
    expect(JSON.stringify(pkg)).not.toContain('workspace:');
  });

  it.each(PUBLIC)(
    '@chain/%s publishes its built modules, README.md, LICENSE and package.json only',
    (name) => {
      const modules = fs
        .readdirSync(path.join(pkgDir(name), 'src'))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => f.slice(0, -3));
      const built = modules.flatMap((m) => ['d.ts', 'js', 'js.map'].map((e) => `dist/${m}.${e}`));
      expect(npmFiles.get(name)).toEqual(['LICENSE', 'README.md', ...built, 'package.json'].sort());
      expect(fs.readFileSync(path.join(pkgDir(name), 'LICENSE'), 'utf8')).toBe(
        fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8'),
      );
    },
  );

  it.each(PUBLIC)('@chain/%s: publint finds nothing, suggestions included', async (name) => {
    const tarball = fs.readFileSync(packed.get(name)!.tarball);
    const bytes = tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.length);
    const { messages, pkg } = await publint({ pack: { tarball: bytes as ArrayBuffer } });
    expect(messages.map((m) => `${m.type}: ${formatMessage(m, pkg, { color: false })}`)).toEqual(
      [],
    );
  });
});

describe('the examples, installed from the tarballs outside the repository', () => {
  it('resolve @chain/* to the installed tarballs, not to links into the workspace', async () => {
    expect(path.relative(ROOT, scratch).startsWith('..')).toBe(true);
    for (const name of PUBLIC) {
      const installed = path.join(project, 'node_modules', '@chain', name);
      expect(fs.lstatSync(installed).isSymbolicLink()).toBe(false);
      expect(manifest(installed)).toEqual(packed.get(name)!.manifest);
    }
    const script = `for (const s of ['@chain/security/express', '@chain/security/fastify', '@chain/security/node', '@chain/oauth-client', '@chain/http', '@chain/errors']) console.log(import.meta.resolve(s));`;
    const out = await tool(process.execPath, ['--input-type=module', '-e', script], project);
    const resolved = out.trim().split('\n');
    expect(resolved).toHaveLength(6);
    for (const url of resolved) {
      expect(url.startsWith(`file://${path.join(project, 'node_modules', '@chain')}/`)).toBe(true);
    }
  });

  it('each is under 60 lines of code', () => {
    for (const example of EXAMPLES) {
      const code = fs
        .readFileSync(path.join(exampleDir(example), 'server.ts'), 'utf8')
        .split('\n')
        .filter((line) => line.trim() && !line.trim().startsWith('//'));
      expect([example, code.length < 60]).toEqual([example, true]);
    }
  });
});

const read = (...parts: string[]) => fs.readFileSync(path.join(CERTS, ...parts));
const certificate = (name: string) => ({
  key: read('clients', `${name}.pem`),
  cert: read('clients', `${name}.pem`),
});
const CLIENT = certificate('client');
const OTHER = certificate('api-a');
const primary = devSigningKey('100');
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const refusal = (statusCode: number, code: string, message: string, description: string) => ({
  statusCode,
  code,
  message,
  description,
});
const challenge = (error: string, description: string, scope = '') =>
  `Bearer realm="api", error="${error}", error_description="${description}"${scope}`;
const BOUND_ELSEWHERE =
  'Token in authorization header is bound to a client certificate or DPoP key that the request does not prove';
const NO_SCOPE =
  'Scopes [write:pets] in authorization token and specification scopes [read:pets] are not matched';
/** Express and Fastify name the charset of their JSON answers. */
const JSON_200: Record<string, string> = {
  express: 'application/json; charset=utf-8',
  fastify: 'application/json; charset=utf-8',
  node: 'application/json',
};

describe.each(EXAMPLES)('examples/%s', (example) => {
  const get = async (headers: Record<string, string>, client?: { key: Buffer; cert: Buffer }) => {
    const res = await httpsRequest(`${examples.get(example)!.origin}/v1/pets`, {
      headers,
      client,
      servername: 'localhost',
    });
    return {
      status: res.status,
      body: res.body,
      text: res.text,
      type: res.headers['content-type'],
      challenge: res.headers['www-authenticate'],
    };
  };
  const refused = (status: number, body: object, wwwAuthenticate: string) => ({
    status,
    body,
    text: JSON.stringify(body),
    type: 'application/json',
    challenge: wwwAuthenticate,
  });
  const tokenOf = (scope: string) =>
    clientCredentialsToken(tokenServer.tokenUrl, 'chain-user', 'chain-user-secret', scope);
  const bound = () =>
    mintToken(primary, {
      scope: ['read:pets'],
      clientId: 'bound-client',
      claims: certificateBound(certificateThumbprint(read('clients', 'client.crt'))),
    });

  it('no token: 401 ERR10002 with the bare challenge', async () => {
    const body = refusal(
      401,
      'ERR10002',
      'MISSING_AUTH_TOKEN',
      'No Authorization header or the token is not bearer type',
    );
    expect(await get({})).toEqual(refused(401, body, 'Bearer realm="api"'));
  });

  it("a token of the token server without the route's scope: 403 ERR10005", async () => {
    const body = refusal(403, 'ERR10005', 'AUTH_TOKEN_SCOPE_MISMATCH', NO_SCOPE);
    expect(await get(bearer(await tokenOf('write:pets')))).toEqual(
      refused(403, body, challenge('insufficient_scope', NO_SCOPE, ', scope="read:pets"')),
    );
  });

  it('an expired token: 401 ERR10001', async () => {
    const expired = mintToken(primary, {
      scope: ['read:pets'],
      now: Date.now() - 3_600_000,
      expiresIn: 600,
    });
    const description = 'Jwt token in authorization header expired';
    const body = refusal(401, 'ERR10001', 'AUTH_TOKEN_EXPIRED', description);
    expect(await get(bearer(expired))).toEqual(
      refused(401, body, challenge('invalid_token', description)),
    );
  });

  it('a token of the token server holding read:pets: 200, the downstream called with an own token', async () => {
    const before = downstream.requests.length;
    const correlationId = `pack-${example}`;
    const answer = await get({
      ...bearer(await tokenOf('read:pets')),
      'X-Correlation-Id': correlationId,
    });
    const body = {
      caller: 'chain-user',
      scopes: ['read:pets'],
      downstream: { messages: ['downstream'] },
    };
    expect(answer).toEqual({
      status: 200,
      body,
      text: JSON.stringify(body),
      type: JSON_200[example],
      challenge: undefined,
    });
    const sent = downstream.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]['x-correlation-id']).toBe(correlationId);
    expect(sent[0]['x-scope-token']).toBeUndefined();
    const own = /^Bearer (.+)$/.exec(String(sent[0].authorization))![1];
    expect(claimsOf(own)).toMatchObject({ client_id: 'api-a-client', scope: 'api_b.r' });
  });

  it('a token bound to a client certificate (RFC 8705): 200 from that certificate only', async () => {
    const token = bound();
    const body = {
      caller: 'bound-client',
      scopes: ['read:pets'],
      downstream: { messages: ['downstream'] },
    };
    const fromIts = await get(bearer(token), CLIENT);
    expect([fromIts.status, fromIts.body]).toEqual([200, body]);
    const mismatch = refusal(401, 'ERR20012', 'TOKEN_BINDING_MISMATCH', BOUND_ELSEWHERE);
    const expected = refused(401, mismatch, challenge('invalid_token', BOUND_ELSEWHERE));
    expect(await get(bearer(token), OTHER)).toEqual(expected);
    expect(await get(bearer(token))).toEqual(expected);
  });
});

describe('the examples, type-checked against the packed types', () => {
  it('each with its own tsconfig.json: no error', async () => {
    expect(await typeCheck).toBe('');
  });
});
