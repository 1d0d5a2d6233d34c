import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import path from 'node:path';
import { loadServiceConfig } from '@chain/runtime';
import {
  args,
  clientCredentialsToken,
  composeCerts,
  readDockerfile,
  spawnNode,
  CERTS,
  ROOT,
  configDir,
  httpsOutcome,
  postForm,
  type Outcome,
  startExpectingFailure,
  startService,
  type ServiceProcess,
  EIGHT,
  waitFor,
} from '@chain/testkit';

// Two-way TLS over real processes: `pnpm start -- --mtls` (scripts/start.mjs on the local run's
// fixed ports), a service with workers and HTTP/2 on it, and the start-up refusal of a
// configuration without a trust store.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const CLIENTS = path.join(CERTS, 'clients');
const CA = fs.readFileSync(path.join(CERTS, 'ca.crt'));
const clientPem = (name: string) => {
  const pem = fs.readFileSync(path.join(CLIENTS, `${name}.pem`));
  return { key: pem, cert: pem };
};
const USER = clientPem('client');
const SERVICES = ['api-a', 'api-b', 'api-c', 'api-d', 'petstore'];

/** One HTTPS/1.1 GET on a fresh connection: the answer, or the client's error and no answer. */
const get = (
  url: string,
  client?: { key: Buffer; cert: Buffer },
  headers: Record<string, string> = {},
) => httpsOutcome(url, { client, headers });

/** A client-credentials request to the local token server: status and parsed body. */
const tokenRequest = (
  form: Record<string, string>,
  headers: Record<string, string> = {},
  client?: { key: Buffer; cert: Buffer },
): Promise<{ status?: number; body?: Record<string, unknown>; error?: string }> =>
  postForm(
    'https://localhost:6882/oauth2/token',
    { grant_type: 'client_credentials', ...form },
    headers,
    client,
  ).then(
    ({ status, body }) => ({ status, body }),
    (err: { code?: string }) => ({ error: err.code }),
  );
/** Runs `script` with bash (-euo pipefail) in the repository: its standard output. */
const runBash = (script: string) =>
  new Promise<string>((resolve, reject) =>
    execFile(
      'bash',
      ['-euo', 'pipefail', '-c', script],
      { cwd: ROOT, timeout: 30_000 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
const claims = (jwt: unknown) =>
  JSON.parse(Buffer.from(String(jwt).split('.')[1], 'base64url').toString()) as Record<
    string,
    unknown
  >;
/**
 * The listening line of this run of `pnpm start` in a service's log file (it appends to the
 * earlier runs'), once the runner has copied it there.
 */
const listeningOf = async (name: string) =>
  JSON.parse(
    await waitFor(
      `${name}'s listening line in its log file`,
      async () => {
        const log = fs.readFileSync(path.join(ROOT, '.run', 'logs', `${name}.log`), 'utf8');
        const lines = log.split('\n');
        const started = lines.findLastIndex((l) => l.includes(`"msg":"starting ${name}`));
        return lines
          .slice(Math.max(0, started))
          .find((l) => l.includes('"msg":"listening on https port'));
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    ),
  ) as Record<string, unknown>;

describe('config/local/mtls: the bundled files with two-way TLS and certificate-bound own tokens, nothing else changed', () => {
  it.each(SERVICES)('%s: server.yml and client.yml', (name) => {
    const bundledDir = path.join(ROOT, 'services', name, 'config');
    const env = { CERTS_DIR: CERTS };
    const bundled = loadServiceConfig({ bundledDir, overrideDir: '/nonexistent', env });
    const mtls = loadServiceConfig({
      bundledDir,
      overrideDir: path.join(ROOT, 'config', 'local', 'mtls', name),
      env,
    });
    // The TLS material read when server.yml loads: the same key and certificate, and the CA.
    expect(mtls.server).toEqual({
      ...bundled.server,
      enableTwoWayTls: true,
      truststoreName: path.join(CLIENTS, 'ca.crt'),
      tls: {
        ...bundled.server.tls,
        requestCert: true,
        rejectUnauthorized: true,
        ca: fs.readFileSync(path.join(CLIENTS, 'ca.crt')),
      },
    });
    const { token } = bundled.client.oauth;
    // Each hop that asks for tokens of its own authenticates with its certificate and gets
    // them bound to it (the petstore asks for none).
    const ownTokens = token.client_credentials && {
      client_credentials: {
        ...token.client_credentials,
        tokenBinding: 'mtls',
        token_endpoint_auth_method: 'tls_client_auth',
      },
    };
    expect(mtls.client).toEqual({
      ...bundled.client,
      tls: {
        ...bundled.client.tls,
        loadKeyStore: true,
        keyStore: path.join(CLIENTS, `${name}.pem`),
        // Read when client.yml loads: the key store's private key and its certificate.
        keyStorePem: {
          key: expect.stringMatching(/^-----BEGIN [A-Z ]*PRIVATE KEY-----/),
          cert: expect.stringMatching(/^-----BEGIN CERTIFICATE-----/),
        },
      },
      oauth: { ...bundled.client.oauth, token: { ...token, ...ownTokens } },
    });
    expect(mtls.loader.warnings).toEqual([]);
  });
});

describe('pnpm start -- --mtls', () => {
  let run: ReturnType<typeof spawnNode>;
  beforeAll(async () => {
    run = spawnNode('pnpm start', path.join(ROOT, 'scripts', 'start.mjs'), {
      args: ['--no-build', '--mtls'],
      cwd: ROOT,
    });
    await run.waitForLine((l) => l.includes('Ctrl-C stops everything.'), 60_000);
  });
  afterAll(() => run.stop());

  it('every service listens with two-way TLS', async () => {
    expect(run.stdout()).toContain(
      'starting the chain (security on, two-way TLS, certificate-bound tokens)',
    );
    for (const name of SERVICES) {
      expect({ name, line: await listeningOf(name) }).toMatchObject({
        name,
        line: { twoWayTls: true },
      });
    }
  });

  it('the curl lines it prints answer the 8 messages through every hop on two-way TLS', async () => {
    const lines = run.stdout().split('\n');
    const from = lines.findIndex((l) => l.startsWith('  TOKEN=$(curl'));
    const token = lines.slice(from, from + 3).join('\n');
    const chain = lines.find(
      (l) => l.includes('https://localhost:7441/v1/data') && l.includes('$TOKEN'),
    );
    expect(token).toContain('--cert certs/clients/client.pem');
    expect(chain).toContain('--cert certs/clients/client.pem');
    const out = await runBash(`${token}\n${chain}`);
    expect(out).toBe(JSON.stringify(EIGHT));
  });

  it('a caller without a client certificate gets a TLS alert from every service, never an answer', async () => {
    for (const port of [7441, 7442, 7443, 7444, 8443]) {
      expect({ port, answer: await get(`https://localhost:${port}/health`) }).toEqual({
        port,
        answer: { error: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' },
      });
    }
    // and the printed line says so: curl's exit code 56, OpenSSL's alert
    const refused = run
      .stdout()
      .split('\n')
      .find((l) => l.includes('# no client certificate'));
    const curl = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile(
        'bash',
        ['-c', refused!.split('#')[0]],
        { cwd: ROOT, timeout: 30_000 },
        (err, _stdout, stderr) => resolve({ code: err ? (err.code as number) : 0, stderr }),
      ),
    );
    expect(curl.code).toBe(56);
    expect(curl.stderr).toContain('alert certificate required');
  });

  it('the token server authenticates each hop by its certificate and binds its tokens to it', async () => {
    expect(await listeningOf('token-server')).toMatchObject({ mtls: true, dpop: false });
    const bound = await tokenRequest({ client_id: 'api-b-client' }, {}, clientPem('api-b'));
    expect(bound.status).toBe(200);
    const thumbprint = Buffer.from(
      new X509Certificate(fs.readFileSync(path.join(CLIENTS, 'api-b.crt'))).fingerprint256.replace(
        /:/g,
        '',
      ),
      'hex',
    ).toString('base64url');
    expect(claims(bound.body?.access_token).cnf).toEqual({ 'x5t#S256': thumbprint });
    // Another hop's certificate, or the secret alone, is not api-b-client.
    const other = await tokenRequest({ client_id: 'api-b-client' }, {}, clientPem('api-c'));
    expect([other.status, other.body?.error]).toEqual([401, 'invalid_client']);
    const secret = await tokenRequest(
      {},
      { Authorization: `Basic ${Buffer.from('api-b-client:api-b-secret').toString('base64')}` },
    );
    expect([secret.status, secret.body?.error]).toEqual([401, 'invalid_client']);
  });

  it("a certificate of another CA (the development CA) is refused; the client CA's passes", async () => {
    const token = await clientCredentialsToken(
      'https://localhost:6882',
      'chain-user',
      'chain-user-secret',
      'api_a.r',
    );
    const auth = { Authorization: `Bearer ${token}` };
    const otherCa = fs.readFileSync(path.join(CERTS, 'client.pem'));
    expect(
      await get('https://localhost:7441/v1/data', { key: otherCa, cert: otherCa }, auth),
    ).toEqual({ error: 'ECONNRESET' });
    expect(await get('https://localhost:7441/v1/data', USER, auth)).toEqual({
      status: 200,
      body: JSON.stringify(EIGHT),
    });
  });
});

describe('pnpm start -- --dpop', () => {
  let run: ReturnType<typeof spawnNode>;
  beforeAll(async () => {
    run = spawnNode('pnpm start', path.join(ROOT, 'scripts', 'start.mjs'), {
      args: ['--no-build', '--dpop'],
      cwd: ROOT,
    });
    await run.waitForLine((l) => l.includes('Ctrl-C stops everything.'), 60_000);
  });
  afterAll(() => run.stop());

  it('the curl lines it prints answer the 8 messages, every hop with DPoP-bound tokens', async () => {
    expect(run.stdout()).toContain('starting the chain (security on, DPoP-bound tokens)');
    expect(await listeningOf('token-server')).toMatchObject({ mtls: false, dpop: true });
    expect((await listeningOf('api-a')).twoWayTls).toBeUndefined(); // one-way TLS
    const lines = run.stdout().split('\n');
    const from = lines.findIndex((l) => l.startsWith('  TOKEN=$(curl'));
    const chain = lines.find(
      (l) => l.includes('https://localhost:7441/v1/data') && l.includes('$TOKEN'),
    );
    const out = await runBash(`${lines.slice(from, from + 3).join('\n')}\n${chain}`);
    expect(out).toBe(JSON.stringify(EIGHT));
  });

  it('a hop’s client gets no token without a DPoP proof, its secret notwithstanding', async () => {
    const answer = await tokenRequest(
      {},
      { Authorization: `Basic ${Buffer.from('api-b-client:api-b-secret').toString('base64')}` },
    );
    expect([answer.status, answer.body?.error]).toEqual([400, 'invalid_grant']);
  });
});

describe('pnpm start -- --mtls --dpop', () => {
  it('is refused before anything starts: one binding or the other', async () => {
    const run = spawnNode('pnpm start', path.join(ROOT, 'scripts', 'start.mjs'), {
      args: ['--no-build', '--mtls', '--dpop'],
      cwd: ROOT,
    });
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain(
      'cannot start: --mtls and --dpop each choose what the tokens are bound to: the certificate or a DPoP key; pass one',
    );
    expect(run.stdout()).not.toContain('starting');
  });
});

describe('a service with two-way TLS, two workers, HTTP/2 and a probe port', () => {
  let svc: ServiceProcess;
  let probe: number;
  beforeAll(async () => {
    const dir = configDir({
      'server.yml': [
        'serviceId: com.networknt.apid-1.0.0',
        'ip: 127.0.0.1',
        'httpsPort: 0',
        `keyFile: ${CERTS}/server.key`,
        `certFile: ${CERTS}/server.crt`,
        'enableHttp2: true',
        'workers: 2',
        'enableTwoWayTls: true',
        `truststoreName: ${CLIENTS}/ca.crt`,
        'probePort: 0',
        '',
      ].join('\n'),
    });
    svc = await startService('api-d', { configDir: dir });
    await svc.waitForLine((l) => l.includes('"msg":"probes listening on https port'), 20_000);
    const line = svc.lines.find((l) => l.includes('"msg":"probes listening on https port'))!;
    probe = (JSON.parse(line) as { port: number }).port;
  });
  afterAll(() => svc.stop());

  /** One GET on its own HTTP/2 session: the answer, or the first error and no answer. */
  const h2 = (port: number, client?: { key: Buffer; cert: Buffer }) =>
    new Promise<Outcome>((resolve) => {
      const session = http2.connect(`https://localhost:${port}`, { ca: CA, ...client });
      let error: string | undefined;
      let status = 0;
      let body = '';
      // A refused handshake reaches the stream (and the session, or not, as timing has it).
      const failed = (err: Error & { code?: string }) => (error ??= err.code);
      session.on('error', failed);
      const stream = session.request({ ':path': '/v1/data' });
      stream.setEncoding('utf8');
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.on('data', (d: string) => (body += d));
      stream.on('error', failed);
      stream.on('close', () => {
        session.destroy();
        resolve(status ? { status, body } : { error: error ?? 'NO_ANSWER' });
      });
      stream.end();
    });

  it('answers h2 and HTTP/1.1 callers with a certificate of the client CA (two workers serving)', async () => {
    const messages = JSON.stringify(['API D: Message 1', 'API D: Message 2']);
    // Fresh connections, handed to the workers in turn.
    for (let i = 0; i < 2; i++) {
      expect(await h2(svc.port, USER)).toEqual({ status: 200, body: messages });
      expect(await get(`https://localhost:${svc.port}/v1/data`, USER)).toEqual({
        status: 200,
        body: messages,
      });
    }
    expect(svc.lines.filter((l) => /"msg":"worker \d serving"/.test(l))).toHaveLength(2);
  });

  it('refuses callers without a certificate on h2 and HTTP/1.1; the probe port answers them', async () => {
    expect(await h2(svc.port)).toEqual({ error: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' });
    expect(await get(`https://localhost:${svc.port}/health`)).toEqual({
      error: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    });
    const up = { status: 'UP', serviceId: 'com.networknt.apid-1.0.0' };
    expect(await get(`https://localhost:${probe}/health`)).toEqual({
      status: 200,
      body: JSON.stringify(up),
    });
    const ready = (await get(`https://localhost:${probe}/ready`)) as { body: string };
    expect({ ...ready, body: JSON.parse(ready.body) as unknown }).toEqual({
      status: 200,
      body: { ...up, config: { generation: 1, hash: expect.stringMatching(/^[0-9a-f]{16}$/) } },
    });
    expect((await get(`https://localhost:${probe}/v1/data`, USER)).status).toBe(404);
  });

  it('the primary logs one line per port', () => {
    const listening = svc.lines
      .filter((l) => /"msg":"(probes )?listening on/.test(l))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(listening).toEqual([
      expect.objectContaining({ port: svc.port, http2: true, twoWayTls: true, workers: 2 }),
      expect.objectContaining({ port: probe, http2: false, probes: true, workers: 2 }),
    ]);
  });
});

describe('the compose config folder switched to two-way TLS as docs/zero-trust.md says', () => {
  let svc: ServiceProcess;
  let probe: number;
  beforeAll(async () => {
    composeCerts();
    const dir = configDir({});
    fs.cpSync(path.join(ROOT, 'config', 'api-d', 'config'), dir, { recursive: true });
    const edit = (file: string, change: (text: string) => string) =>
      fs.writeFileSync(path.join(dir, file), change(fs.readFileSync(path.join(dir, file), 'utf8')));
    edit(
      'server.yml',
      (t) =>
        `${t}enableTwoWayTls: true\ntruststoreName: certs/clients/ca.crt\nprobePort: \${server.probePort}\n`,
    );
    edit('client.yml', (t) =>
      t
        .replace('  loadKeyStore: false\n', '  loadKeyStore: true\n')
        .replace('  keyStore: certs/client.pem\n', '  keyStore: certs/clients/api-d.pem\n'),
    );
    // A free port for SERVER_PROBEPORT, as compose's environment would give a fixed one.
    const free = net.createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    probe = (free.address() as net.AddressInfo).port;
    await new Promise<void>((r) => free.close(() => r()));
    svc = await startService('api-d', { configDir: dir, env: { SERVER_PROBEPORT: String(probe) } });
    await svc.waitForLine(
      (l) => l.includes(`"msg":"probes listening on https port ${probe}"`),
      20_000,
    );
  });
  afterAll(() => svc.stop());

  /** The image's HEALTHCHECK command, run by node as the image runs it. */
  const healthcheck = (env: NodeJS.ProcessEnv) => {
    const [health] = args(
      readDockerfile(path.join(ROOT, 'services', 'api-d', 'Dockerfile')).final,
      'HEALTHCHECK',
    );
    const cmd = JSON.parse(health.replace(/^.*?CMD\s+/, '')) as string[];
    return new Promise<number | null>((resolve) =>
      execFile(process.execPath, cmd.slice(1), { env: { PATH: process.env.PATH, ...env } }).once(
        'exit',
        resolve,
      ),
    );
  };

  it('the service requires client certificates on 7444 and its HEALTHCHECK passes on the probe port', async () => {
    expect(svc.port).toBe(7444);
    expect(await get('https://localhost:7444/health')).toEqual({
      error: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    });
    expect((await get('https://localhost:7444/health', USER)).status).toBe(200);
    expect(await healthcheck({ SERVER_PROBEPORT: String(probe) })).toBe(0);
    // Without the variable the check goes to the service's port, which refuses it.
    expect(await healthcheck({})).toBe(1);
  });
});

describe('enableTwoWayTls without a trust store', () => {
  it('stops the start: one line naming the file and the key, exit 1', async () => {
    const dir = configDir({
      'server.yml': `serviceId: s\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\nenableTwoWayTls: true\n`,
    });
    const { code, stderr, stdout } = await startExpectingFailure('petstore', dir);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Cannot start: Config error in ${dir}/server.yml at key "truststoreName": is required with enableTwoWayTls: the PEM file of the CA certificates that a client certificate must chain to\n`,
    );
    expect(stdout).not.toMatch(/listening on/);
  });
});
