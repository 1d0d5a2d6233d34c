import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  httpsRequest,
  type Answer,
  claimsOf,
  clientCredentialsToken,
  startTokenServer,
  tokenRequestCounts,
  tokenServerYml,
  type TokenServerProcess,
  CERTS,
  configDir,
  startService,
  type ServiceProcess,
  EIGHT,
  ONE_CALL_TOKENS,
} from '@chain/testkit';

// Everything real: the token server and api-a ... api-d as processes over HTTPS, security on.
vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

/** Own tokens live 8 s (renewed from 1 s before expiry); the user's token 10 minutes. */
const OWN_LIFETIME_S = 8;
const TIMEOUT_MS = 1500;
/** client.yml expiredRefreshRetryDelay: after a failed renewal, callers fail at once this long. */
const EXPIRED_RETRY_MS = 500;

const CLIENTS = `clients:
  api-a-client: { secret: api-a-secret, scope: [api_b.r, api_b.w], tokenLifetimeSeconds: ${OWN_LIFETIME_S} }
  api-b-client: { secret: api-b-secret, scope: [api_c.r, api_c.w], tokenLifetimeSeconds: ${OWN_LIFETIME_S} }
  api-c-client: { secret: api-c-secret, scope: [api_d.r, api_d.w], tokenLifetimeSeconds: ${OWN_LIFETIME_S} }
  api-d-client: { secret: api-d-secret, scope: [] }
  chain-user: { secret: chain-user-secret, scope: [api_a.r, api_a.w], tokenLifetimeSeconds: 600 }
`;

const serverYml = (letter: string) =>
  `serviceId: com.networknt.api${letter}-1.0.0\nip: 127.0.0.1\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`;

// Audit lines hold client_id, user_id and scope, never the whole token.
const SECURITY = `enableVerifyJwt: true
enableVerifyScope: true
jwt:
  certificate:
    '100': ${CERTS}/primary.crt
    '101': ${CERTS}/secondary.crt
logJwtToken: false
logClientUserScope: true
`;

const clientYml = (ts: TokenServerProcess, clientId: string, scope: string[]) => `tls:
  trustStore: ${CERTS}/ca.crt
request:
  timeout: ${TIMEOUT_MS}
oauth:
  token:
    server_url: ${ts.tokenUrl}
    tokenRenewBeforeExpired: 1000
    expiredRefreshRetryDelay: ${EXPIRED_RETRY_MS}
    earlyRefreshRetryDelay: 500
    client_credentials:
      uri: /oauth2/token
      client_id: ${clientId}
      scope: [${scope.join(', ')}]
  key:
    server_url: ${ts.keyUrl}
    uri: /oauth2/key
    client_id: ${clientId}
`;

const fingerprint = (jwt: string) => createHash('sha256').update(jwt).digest('hex').slice(0, 16);
/** Resolves at a moment the token server named (a token's expiry), not after a guessed sleep. */
const at = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

/** When the chain services' own tokens expire, as the token server logged them when it issued them. */
function ownTokensExpireAt(ts: TokenServerProcess): number {
  const issued = ts.lines
    .map((l) => JSON.parse(l) as { msg?: string; clientId?: string; expiresAt?: number })
    .filter((l) => l.msg === 'token issued' && l.clientId !== 'chain-user');
  expect(issued.map((l) => l.clientId).sort()).toEqual([
    'api-a-client',
    'api-b-client',
    'api-c-client',
  ]);
  return Math.max(...issued.map((l) => l.expiresAt!));
}

interface LogLine {
  msg: string;
  correlationId?: string;
  [key: string]: unknown;
}
const logLines = (p: ServiceProcess, msg: string, correlationId: string): LogLine[] =>
  p.lines
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        return undefined;
      }
    })
    .filter((l): l is LogLine => l?.msg === msg && l.correlationId === correlationId);

describe('the secured chain: tokens obtained, renewed and passed on (real processes)', () => {
  let ts: TokenServerProcess;
  let tsDir: string;
  const chain: Record<'a' | 'b' | 'c' | 'd', ServiceProcess> = {} as never;
  let userToken: string;
  /** When the services' own tokens expire, from the token server's log. */
  let ownExpiry: number;

  const callA = (headers: Record<string, string> = {}): Promise<Answer> =>
    httpsRequest(`https://localhost:${chain.a.port}/v1/data`, {
      headers: { Authorization: `Bearer ${userToken}`, ...headers },
    });

  beforeAll(async () => {
    tsDir = configDir({ 'token-server.yml': tokenServerYml(), 'clients.yml': CLIENTS });
    ts = await startTokenServer({ dir: tsDir });
    const start = async (letter: 'a' | 'b' | 'c' | 'd', files: Record<string, string>) => {
      chain[letter] = await startService(`api-${letter}`, {
        configDir: configDir({
          'server.yml': serverYml(letter),
          'security.yml': SECURITY,
          ...files,
        }),
        env: { LOG_LEVEL: 'debug' },
      });
    };
    const hop = (x: string, y: string, port: number) => ({
      [`api_${x}.yml`]: `api_${y}_host: https://localhost:${port}\napi_${y}_path: /v1/data\n`,
    });
    await start('d', { 'client.yml': clientYml(ts, 'api-d-client', []) });
    await start('c', {
      'client.yml': clientYml(ts, 'api-c-client', ['api_d.r', 'api_d.w']),
      ...hop('c', 'd', chain.d.port),
    });
    await start('b', {
      'client.yml': clientYml(ts, 'api-b-client', ['api_c.r', 'api_c.w']),
      ...hop('b', 'c', chain.c.port),
    });
    await start('a', {
      'client.yml': clientYml(ts, 'api-a-client', ['api_b.r', 'api_b.w']),
      ...hop('a', 'b', chain.b.port),
    });
    userToken = await clientCredentialsToken(
      ts.tokenUrl,
      'chain-user',
      'chain-user-secret',
      'api_a.r',
    );
  });

  afterAll(async () => {
    await Promise.all([ts, ...Object.values(chain)].filter(Boolean).map((p) => p.stop()));
  });

  it('api-a answers the 8 messages; 200 chain requests cost one token request per calling service', async () => {
    expect((await callA({ Authorization: '' })).body).toMatchObject({ code: 'ERR10002' });
    const answers: Answer[] = [];
    for (let batch = 0; batch < 10; batch++) {
      answers.push(...(await Promise.all(Array.from({ length: 20 }, () => callA()))));
    }
    expect(answers.map((a) => a.status)).toEqual(Array(200).fill(200));
    for (const a of answers) expect(a.body).toEqual(EIGHT);
    ownExpiry = ownTokensExpireAt(ts);
    expect(Date.now()).toBeLessThan(ownExpiry - 1000); // before the renewal window: no renewal yet
    expect(await tokenRequestCounts(ts.tokenUrl)).toEqual(ONE_CALL_TOKENS);
  });

  it("each hop passes the caller's Authorization unchanged, its own token as X-Scope-Token, one correlation id", async () => {
    const answer = await callA({
      'X-Correlation-Id': 'e2e-corr-1',
      'X-Traceability-Id': 'e2e-trace-1',
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(EIGHT);
    expect(answer.headers['x-correlation-id']).toBe('e2e-corr-1');
    expect(answer.headers['x-traceability-id']).toBe('e2e-trace-1');

    const user = { fingerprint: fingerprint(userToken), client_id: 'chain-user' };
    const expected: Record<string, { scopeToken?: string }> = {
      a: {},
      b: { scopeToken: 'api-a-client' },
      c: { scopeToken: 'api-b-client' },
      d: { scopeToken: 'api-c-client' },
    };
    for (const [letter, want] of Object.entries(expected)) {
      const proc = chain[letter as keyof typeof chain];
      // Log lines come through a pipe and may trail the HTTP answer: wait for them.
      for (const msg of ['chain request', 'jwt verified']) {
        await proc.waitForLine(
          (l) => l.includes('"correlationId":"e2e-corr-1"') && l.includes(`"msg":"${msg}"`),
        );
      }
      // The chain handler's trace line: token fingerprints and client ids, never a token.
      const seen = logLines(proc, 'chain request', 'e2e-corr-1');
      expect(seen).toHaveLength(1);
      expect(seen[0].traceabilityId).toBe('e2e-trace-1');
      expect(seen[0].authorization).toEqual(user);
      if (want.scopeToken) {
        expect(seen[0].scopeToken).toEqual({
          fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/),
          client_id: want.scopeToken,
        });
      } else {
        expect(seen[0].scopeToken).toBeUndefined();
      }
      // The security middleware's audit line: the caller's token, verified at every hop.
      const audit = logLines(proc, 'jwt verified', 'e2e-corr-1');
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ client_id: 'chain-user', scope: 'api_a.r' });
      expect(proc.lines.join('\n')).not.toContain(userToken);
    }
  });

  it("a hop lets the user's token through only with a valid scope token of the right scopes", async () => {
    const callB = (headers: Record<string, string>) =>
      httpsRequest(`https://localhost:${chain.b.port}/v1/data`, {
        headers: { Authorization: `Bearer ${userToken}`, ...headers },
      });
    // The user's own scopes (api_a.r) do not open api-b ...
    expect((await callB({})).body).toMatchObject({ statusCode: 403, code: 'ERR10005' });
    // ... a scope token of another client's scopes neither ...
    const cToken = await clientCredentialsToken(ts.tokenUrl, 'api-c-client', 'api-c-secret');
    expect((await callB({ 'X-Scope-Token': `Bearer ${cToken}` })).body).toMatchObject({
      statusCode: 403,
      code: 'ERR10006',
    });
    // ... nor a forged one; api-a's own token does.
    const [h, p] = cToken.split('.');
    const forged = `${h}.${p}.${Buffer.from('not a signature').toString('base64url')}`;
    expect((await callB({ 'X-Scope-Token': `Bearer ${forged}` })).body).toMatchObject({
      statusCode: 401,
      code: 'ERR10003',
    });
    const aToken = await clientCredentialsToken(ts.tokenUrl, 'api-a-client', 'api-a-secret');
    const ok = await callB({ 'X-Scope-Token': `Bearer ${aToken}` });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual(EIGHT.slice(0, 6));
  });

  it('faults: token server stopped while tokens are fresh, tokens expire while it is down, it comes back', async () => {
    const tokenPort = ts.port;
    const keyPort = ts.keyPort;
    expect(await ts.stop()).toBe(0);

    // Fresh tokens: the chain keeps answering.
    expect(Date.now()).toBeLessThan(ownExpiry - 1000);
    for (let i = 0; i < 5; i++) {
      const answer = await callA();
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(EIGHT);
    }

    // Expired while the token server is down: ERR10009 within the time-out, no hang.
    // The services compute expiry from `expires_in` when they receive the token: a moment after
    // the token server's `expiresAt`.
    await at(ownExpiry + 200);
    const started = Date.now();
    const failed = await callA();
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    expect(failed.status).toBe(408);
    expect(failed.headers['content-type']).toBe('application/json');
    expect(failed.body).toEqual({
      statusCode: 408,
      code: 'ERR10009',
      message: 'CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
      description: 'Could not get client credentials token in client module',
    });
    // A caller right after the failure is answered at once (expiredRefreshRetryDelay).
    const again = Date.now();
    expect((await callA()).status).toBe(408);
    expect(Date.now() - again).toBeLessThan(TIMEOUT_MS);

    // The token server comes back on the same ports: the chain answers again, nothing restarted.
    fs.writeFileSync(
      path.join(tsDir, 'token-server.yml'),
      tokenServerYml()
        .replace('tokenPort: 0', `tokenPort: ${tokenPort}`)
        .replace('keyPort: 0', `keyPort: ${keyPort}`),
    );
    ts = await startTokenServer({ dir: tsDir });
    expect(ts.port).toBe(tokenPort);
    // api-a asks again once its retry delay after the failed renewal has passed.
    await at(started + EXPIRED_RETRY_MS);
    const back = await callA();
    expect({ status: back.status, body: back.body }).toEqual({ status: 200, body: EIGHT });
    // The new token server saw one renewal per calling service.
    expect(await tokenRequestCounts(ts.tokenUrl)).toEqual({
      'api-a-client': 1,
      'api-b-client': 1,
      'api-c-client': 1,
    });
    // The renewed tokens are new ones.
    expect(claimsOf(userToken).client_id).toBe('chain-user');
  });
});
