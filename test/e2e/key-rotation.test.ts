import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  b64url,
  createSigningKey,
  loadSigningKey,
  mintToken,
  type SigningKey,
  clientCredentialsToken,
  startTokenServer,
  type TokenServerProcess,
  httpsRequest,
  CERTS,
  configDir,
  startService,
  type ServiceProcess,
  writeKeyPair,
  EIGHT,
} from '@chain/testkit';

/**
 * Key rotation against the real local token and key server while the chain runs: the server
 * starts signing with a new kid (a reload on SIGHUP, no restart of anything), later stops
 * publishing the old one, and a flood of made-up kids (about 40 a second for 36 s) hits
 * api-a the whole time. Measured: how long until the new kid is accepted through the whole
 * chain, how long until the retired kid is refused, the key server's requests per second, and
 * that every made-up kid got 401 ERR10000.
 */
const FLOOD_MS = 36_000;
const ROTATE_AT_MS = 8_000;
const RETIRE_AT_MS = 26_000;
const KEY_MAX_AGE_S = 6;
const TOKEN_LIFETIME_S = 15;

const ERR10000 = {
  statusCode: 401,
  code: 'ERR10000',
  message: 'INVALID_AUTH_TOKEN',
  description: 'Incorrect signature or malformed token in authorization header',
};
const INVALID_CHALLENGE =
  'Bearer realm="api", error="invalid_token", error_description="Incorrect signature or malformed token in authorization header"';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'key-rotation-'));
const oldKey = createSigningKey('200');
const newKey = createSigningKey('201');
writeKeyPair(oldKey, dir);
writeKeyPair(newKey, dir);
const devPrimary = loadSigningKey(
  '100',
  path.join(CERTS, 'primary.key'),
  path.join(CERTS, 'primary.crt'),
);

/** token-server.yml signing with `signing` and serving `served`. */
function tokenServerYml(signing: SigningKey, served: SigningKey[]): string {
  return `ip: 127.0.0.1
tokenPort: 0
keyPort: 0
keyFile: ${CERTS}/server.key
certFile: ${CERTS}/server.crt
tokenLifetimeSeconds: ${TOKEN_LIFETIME_S}
signing:
  kid: '${signing.kid}'
  keyFile: ${dir}/${signing.kid}.key
certificates:
${served.map((k) => `  '${k.kid}': ${dir}/${k.kid}.crt`).join('\n')}
shutdownTimeoutMs: 1000
`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('key rotation while the chain runs, under a flood of made-up kids', () => {
  // The bundled clients, the user's tokens living an hour (the services' live TOKEN_LIFETIME_S).
  const clients = fs
    .readFileSync(
      path.join(
        import.meta.dirname,
        '..',
        '..',
        'services',
        'token-server',
        'config',
        'clients.yml',
      ),
      'utf8',
    )
    .replace(
      'secret: chain-user-secret',
      'secret: chain-user-secret\n    tokenLifetimeSeconds: 3600',
    );
  const tokenDir = configDir({
    'token-server.yml': tokenServerYml(oldKey, [oldKey]),
    'clients.yml': clients,
  });
  let ts: TokenServerProcess;
  const chain: Record<string, ServiceProcess> = {};

  beforeAll(async () => {
    ts = await startTokenServer({ dir: tokenDir });
    let downstream: string | undefined;
    for (const x of ['d', 'c', 'b', 'a']) {
      const next = { a: 'b', b: 'c', c: 'd' }[x];
      chain[x] = await startService(`api-${x}`, {
        configDir: configDir({
          'server.yml': `serviceId: rotation-api-${x}\nip: 127.0.0.1\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`,
          // kid 100 only: the kids the token server signs with come from its key server
          'security.yml': `enableVerifyJwt: true
jwt:
  keyMaxAgeSeconds: ${KEY_MAX_AGE_S}
  certificate:
    '100': ${CERTS}/primary.crt
logJwtToken: false
logClientUserScope: true
`,
          'client.yml': `tls:
  trustStore: ${CERTS}/ca.crt
request:
  timeout: 3000
oauth:
  token:
    server_url: ${ts.tokenUrl}
    tokenRenewBeforeExpired: 5000
    client_credentials:
      uri: /oauth2/token
      client_id: api-${x}-client
  key:
    server_url: ${ts.keyUrl}
    uri: /oauth2/key
    client_id: api-${x}-client
    audience: urn:chain:api
    issuer: https://localhost:6882
`,
          ...(next && downstream
            ? { [`api_${x}.yml`]: `api_${next}_host: ${downstream}\napi_${next}_path: /v1/data\n` }
            : {}),
        }),
      });
      downstream = `https://localhost:${chain[x].port}`;
    }
  }, 60_000);

  afterAll(async () => {
    for (const x of ['a', 'b', 'c', 'd']) if (chain[x]) expect(await chain[x].stop()).toBe(0);
    if (ts) expect(await ts.stop()).toBe(0);
  });

  const call = (x: string, token: string) =>
    httpsRequest(`https://localhost:${chain[x].port}/v1/data`, {
      headers: { Authorization: `Bearer ${token}` },
    });
  const userToken = () =>
    clientCredentialsToken(ts.tokenUrl, 'chain-user', 'chain-user-secret', 'api_a.r');
  const kidOf = (jwt: string) =>
    (JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString()) as { kid: string }).kid;

  it('refuses a token for another audience with 401 ERR10000 at every service of the chain', async () => {
    const foreign = mintToken(devPrimary, {
      scope: ['api_a.r', 'api_b.r', 'api_c.r', 'api_d.r'],
      claims: { aud: 'urn:other:api' },
    });
    for (const x of ['a', 'b', 'c', 'd']) {
      const res = await call(x, foreign);
      expect({
        x,
        status: res.status,
        body: res.body,
        challenge: res.headers['www-authenticate'],
      }).toEqual({
        x,
        status: 401,
        body: ERR10000,
        challenge: INVALID_CHALLENGE,
      });
    }
  });

  it('accepts a new kid within 15 s and refuses a retired one within its maximum age; every made-up kid gets 401; the key server sees a few requests a second', async () => {
    const before = await userToken();
    expect(kidOf(before)).toBe('200');
    const first = await call('a', before);
    expect(first.status).toBe(200);
    expect(first.body).toEqual(EIGHT);
    const statsBefore = (await httpsRequest(`${ts.tokenUrl}/stats`)).body as {
      keyRequests: number;
    };

    // The flood: about 40 made-up kids a second at api-a, short and long kids alike.
    const flood = { statuses: new Map<number, number>(), wrong: [] as unknown[], sent: 0 };
    let flooding = true;
    const [, payload, signature] = mintToken(devPrimary, { scope: ['api_a.r'] }).split('.');
    const flooder = (async () => {
      for (let n = 0; flooding; n++) {
        const answers = await Promise.all(
          [0, 1, 2, 3].map((i) => {
            // light-oauth2 answers a short unknown kid 400 ERR12030, a long one 404 ERR12017
            const kid = i % 2 ? `z${String(n % 100).padStart(2, '0')}` : `made-up-${n}-${i}`;
            return call(
              'a',
              `${b64url({ alg: 'RS256', typ: 'JWT', kid })}.${payload}.${signature}`,
            );
          }),
        );
        for (const res of answers) {
          flood.sent++;
          flood.statuses.set(res.status, (flood.statuses.get(res.status) ?? 0) + 1);
          const body = res.body;
          if (
            res.status !== 401 ||
            JSON.stringify(body) !== JSON.stringify(ERR10000) ||
            res.headers['www-authenticate'] !== INVALID_CHALLENGE
          ) {
            flood.wrong.push({ status: res.status, body });
          }
        }
        await sleep(100);
      }
    })();
    const floodStarted = Date.now();

    // Steady good traffic through the whole chain, with the current user token.
    let current = before;
    const traffic: { at: number; status: number; kid: string }[] = [];
    let trafficOn = true;
    const trafficker = (async () => {
      while (trafficOn) {
        const token = current;
        const res = await call('a', token);
        traffic.push({ at: Date.now(), status: res.status, kid: kidOf(token) });
        await sleep(1000);
      }
    })();

    // Rotation: sign with 201, publish 200 and 201, without restarting anything.
    await sleep(ROTATE_AT_MS);
    fs.writeFileSync(
      path.join(tokenDir, 'token-server.yml'),
      tokenServerYml(newKey, [oldKey, newKey]),
    );
    const rotatedAt = Date.now();
    ts.child.kill('SIGHUP');
    await ts.waitForLine((l) => /reloaded: signing and serving keys/.test(l));
    const after = await userToken();
    expect(kidOf(after)).toBe('201');
    let acceptedAfterMs: number | undefined;
    for (let i = 0; i < 80 && acceptedAfterMs === undefined; i++) {
      const res = await call('a', after);
      if (res.status === 200) {
        expect(res.body).toEqual(EIGHT);
        acceptedAfterMs = Date.now() - rotatedAt;
      } else {
        await sleep(250);
      }
    }
    current = after;
    expect(acceptedAfterMs).toBeDefined();
    expect(acceptedAfterMs!).toBeLessThanOrEqual(15_000);

    // Retirement: the key server stops publishing 200. The services' own tokens of 200 have
    // expired and been renewed (kid 201) by now; a token of 200 that has not expired is refused.
    const stillOld = mintToken(oldKey, { scope: ['api_a.r'], expiresIn: 3600 });
    expect((await call('a', stillOld)).status).toBe(200);
    await sleep(Math.max(0, floodStarted + RETIRE_AT_MS - Date.now()));
    fs.writeFileSync(path.join(tokenDir, 'token-server.yml'), tokenServerYml(newKey, [newKey]));
    const retiredAt = Date.now();
    ts.child.kill('SIGHUP');
    await ts.waitForLine((l) => /"kids":\["201"\]/.test(l));
    let refusedAfterMs: number | undefined;
    for (let i = 0; i < 60 && refusedAfterMs === undefined; i++) {
      const res = await call('a', stillOld);
      if (res.status === 401) {
        expect({ body: res.body, challenge: res.headers['www-authenticate'] }).toEqual({
          body: ERR10000,
          challenge: INVALID_CHALLENGE,
        });
        refusedAfterMs = Date.now() - retiredAt;
      } else {
        await sleep(250);
      }
    }
    expect(refusedAfterMs).toBeDefined();
    expect(refusedAfterMs!).toBeLessThanOrEqual(KEY_MAX_AGE_S * 1000 + 1000);

    await sleep(Math.max(0, floodStarted + FLOOD_MS - Date.now()));
    flooding = false;
    trafficOn = false;
    await Promise.all([flooder, trafficker]);
    const floodSeconds = (Date.now() - floodStarted) / 1000;
    const stats = (await httpsRequest(`${ts.tokenUrl}/stats`)).body as {
      keyRequests: number;
      keyRequestsPeakPerSecond: number;
    };
    const keyRequests = stats.keyRequests - statsBefore.keyRequests;
    const report = {
      floodSeconds: Math.round(floodSeconds),
      madeUpKidsSent: flood.sent,
      madeUpKidsPerSecond: Math.round(flood.sent / floodSeconds),
      newKidAcceptedAfterMs: acceptedAfterMs,
      retiredKidRefusedAfterMs: refusedAfterMs,
      keyServerRequests: keyRequests,
      keyServerRequestsPerSecond: Number((keyRequests / floodSeconds).toFixed(2)),
      keyServerPeakPerSecond: stats.keyRequestsPeakPerSecond,
      goodCalls: traffic.length,
      goodCallsFailed: traffic.filter((t) => t.status !== 200).length,
    };
    process.stdout.write(`key rotation: ${JSON.stringify(report)}\n`);

    expect(flood.wrong).toEqual([]);
    expect([...flood.statuses.keys()]).toEqual([401]);
    expect(flood.sent / floodSeconds).toBeGreaterThanOrEqual(20);
    expect(report.keyServerRequestsPerSecond).toBeLessThanOrEqual(4);
    expect(stats.keyRequestsPeakPerSecond).toBeLessThanOrEqual(10);
    // the chain served every good call, before, during and after both key changes
    expect(traffic.filter((t) => t.status !== 200)).toEqual([]);
  }, 120_000);
});
