import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createSigningKey,
  type SigningKey,
  type Answer,
  httpsRequest,
  clientCredentialsToken,
  startTokenServer,
  tokenRequestCounts,
  type TokenServerProcess,
  CERTS,
  configDir,
  EIGHT,
  at,
  jsonLines,
  startChain,
  type RunningChain,
  ONE_CALL_TOKENS,
  writeKeyPair,
} from '@chain/testkit';

// Failures that heal by themselves, everything real: a downstream killed under load (the
// breaker opens, calls fail fast and are counted, it closes when the downstream is back), and
// a token server restarted with a new signing key (the services' cached tokens are refused
// downstream; each hop renews its token and calls once more, by itself).
vi.setConfig({ testTimeout: 90000, hookTimeout: 90000 });

const RESET_MS = 1500;
const KEY_MAX_AGE_S = 2;

const metricsOf = async (port: number) =>
  (await httpsRequest(`https://localhost:${port}/metrics`)).text;
const metric = (text: string, line: string) => {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
};

describe('a downstream killed mid-load: the breaker opens, fails fast, and closes when it is back (real processes)', () => {
  let ts: TokenServerProcess;
  let chain: RunningChain;
  let user: string;

  beforeAll(async () => {
    ts = await startTokenServer();
    chain = await startChain({
      ts,
      request: `  timeout: 2000\n  connectTimeout: 500\n  errorThreshold: 2\n  resetTimeout: ${RESET_MS}\n`,
      files: () => ({ 'prometheus.yml': 'enabled: true\n' }),
    });
    user = await clientCredentialsToken(ts.tokenUrl, 'chain-user', 'chain-user-secret', 'api_a.r');
  });
  afterAll(async () => {
    await Promise.all([ts?.stop(), chain?.stop()]);
  });

  it('under load: ERR20002 twice at api-c, then 503 ERR20011 at once; back: the trial call closes it', async () => {
    const auth = { Authorization: `Bearer ${user}` };
    const answers: { answer: Answer; ms: number; at: number }[] = [];
    let loading = true;
    let warm: () => void = () => undefined;
    const warmedUp = new Promise<void>((resolve) => (warm = resolve));
    // 4 callers in a loop against api-a while api-d dies and comes back.
    const load = Array.from({ length: 4 }, async () => {
      while (loading) {
        const started = Date.now();
        const answer = await chain.call('a', auth);
        answers.push({ answer, ms: Date.now() - started, at: started });
        if (answers.length === 40) warm();
      }
    });
    await warmedUp; // 40 answers under load before the kill
    const d = chain.services.d;
    d.child.kill('SIGKILL');
    await d.exited;
    const killedAt = Date.now();
    // api-c opens its circuit: a signal from its log.
    const c = chain.services.c;
    const opened = JSON.parse(await c.waitForLine((l) => l.includes('"msg":"circuit open'))) as {
      downstream: string;
    };
    expect(opened.downstream).toBe('api-d');
    const openedAt = Date.now();
    // Calls while it is open fail at once, with the circuit's own code, through the chain.
    const fast = await chain.call('a', auth);
    expect(fast.status).toBe(503);
    expect(fast.body).toEqual({
      statusCode: 503,
      code: 'ERR20011',
      message: 'DOWNSTREAM_CIRCUIT_OPEN',
      description: 'Downstream service api-d is not called for now: it failed too often in a row',
    });
    await chain.restart('d');
    await c.waitForLine((l) => l.includes('"msg":"circuit closed'), RESET_MS + 5000);
    const closedAt = Date.now();
    loading = false;
    await Promise.all(load);
    const back = await chain.call('a', auth);
    expect({ status: back.status, body: back.body }).toEqual({ status: 200, body: EIGHT });

    // Before the kill: 8 messages; between the kill and the open circuit: ERR20002 (api-d down);
    // while open: ERR20011, answered fast; after it closed: 8 messages again. Nothing else.
    const during = answers.filter((a) => a.at >= killedAt && a.at < closedAt);
    const outcome = (a: Answer) => (a.status === 200 ? 'ok' : (a.body as { code: string }).code);
    const codes = new Set(answers.map((a) => outcome(a.answer)));
    for (const code of codes) expect(['ok', 'ERR20002', 'ERR20011']).toContain(code);
    for (const a of answers.filter((x) => x.at < killedAt - 100))
      expect(outcome(a.answer)).toBe('ok');
    const rejected = during.filter(
      (a) => a.answer.status === 503 && (a.answer.body as { code: string }).code === 'ERR20011',
    );
    expect(rejected.length).toBeGreaterThan(0);
    const slowest = Math.max(...rejected.map((a) => a.ms));
    expect(slowest).toBeLessThan(500); // no connect attempt, no time-out: at once
    for (const a of answers.filter((x) => x.at >= closedAt)) expect(a.answer.status).toBe(200);

    // Counted where it happened: api-c's circuit opened once (at least), refused the calls above.
    const cm = await metricsOf(c.port);
    expect(metric(cm, 'circuit_opened_total{downstream="api-d"}')).toBeGreaterThanOrEqual(1);
    expect(metric(cm, 'circuit_rejected_total{downstream="api-d"}')).toBeGreaterThanOrEqual(
      rejected.length + 1,
    );
    expect(metric(cm, 'circuit_state{downstream="api-d"}')).toBe(0);
    // Upstream hops passed the failure on; their own circuits never opened (api-c answered).
    for (const letter of ['a', 'b'] as const) {
      const m = await metricsOf(chain.services[letter].port);
      expect(
        metric(m, `circuit_opened_total{downstream="api-${letter === 'a' ? 'b' : 'c'}"}`),
      ).toBe(undefined);
    }
    process.stdout.write(
      `breaker: ${answers.length} calls; api-d killed at +0 ms, circuit open at +${openedAt - killedAt} ms, ` +
        `closed at +${closedAt - killedAt} ms; ${rejected.length} fast failures, slowest ${slowest} ms\n`,
    );
  });
});

describe('a token server restarted with a new signing key: one automatic retry with a renewed token (real processes)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resilience-keys-'));
  const before = createSigningKey('300');
  const after = createSigningKey('301');
  writeKeyPair(before, dir);
  writeKeyPair(after, dir);
  const yml = (signing: SigningKey, ports = { token: 0, key: 0 }) => `ip: 127.0.0.1
tokenPort: ${ports.token}
keyPort: ${ports.key}
keyFile: ${CERTS}/server.key
certFile: ${CERTS}/server.crt
signing:
  kid: '${signing.kid}'
  keyFile: ${dir}/${signing.kid}.key
certificates:
  '${signing.kid}': ${dir}/${signing.kid}.crt
shutdownTimeoutMs: 1000
`;
  let ts: TokenServerProcess;
  let tsDir: string;
  let chain: RunningChain;

  beforeAll(async () => {
    tsDir = configDir({ 'token-server.yml': yml(before) });
    ts = await startTokenServer({ dir: tsDir });
    // Keys only from the key server, kept at most KEY_MAX_AGE_S: a retired kid is refused soon.
    chain = await startChain({
      ts,
      security: `bootstrapFromKeyService: true\njwt:\n  keyMaxAgeSeconds: ${KEY_MAX_AGE_S}\n`,
      files: () => ({ 'prometheus.yml': 'enabled: true\n' }),
    });
  });
  afterAll(async () => {
    await Promise.all([ts?.stop(), chain?.stop()]);
  });

  it('the next call succeeds: each hop is refused its cached token once, renews it and calls again', async () => {
    const user = await clientCredentialsToken(
      ts.tokenUrl,
      'chain-user',
      'chain-user-secret',
      'api_a.r',
    );
    expect((await chain.call('a', { Authorization: `Bearer ${user}` })).body).toEqual(EIGHT);

    // The token server comes back on the same ports signing with a new key, the old one gone.
    const ports = { token: ts.port, key: ts.keyPort };
    expect(await ts.stop()).toBe(0);
    const stoppedAt = Date.now();
    fs.writeFileSync(path.join(tsDir, 'token-server.yml'), yml(after, ports));
    ts = await startTokenServer({ dir: tsDir });
    // Past the keys' maximum age, every hop asks the key server again and learns kid 300 is gone.
    await at(stoppedAt + KEY_MAX_AGE_S * 1000 + 200);

    const fresh = await clientCredentialsToken(
      ts.tokenUrl,
      'chain-user',
      'chain-user-secret',
      'api_a.r',
    );
    const answer = await chain.call('a', {
      Authorization: `Bearer ${fresh}`,
      'X-Correlation-Id': 'rekeyed-1',
    });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: EIGHT });
    // Each calling service renewed once at the new token server, and retried once.
    expect(await tokenRequestCounts(ts.tokenUrl)).toEqual(ONE_CALL_TOKENS);
    for (const [letter, next] of [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
    ] as const) {
      const m = await metricsOf(chain.services[letter].port);
      expect(
        metric(m, `downstream_retries_total{downstream="api-${next}",reason="invalid_token"}`),
      ).toBe(1);
      expect(
        metric(m, `token_renewals_total{clientId="api-${letter}-client",trigger="invalid_token"}`),
      ).toBe(1);
      // The refusal the retry mended was of our own scope token, as the next hop logged it (log
      // lines come through a pipe and may trail the answer: wait for it).
      await chain.services[next].waitForLine(
        (l) => l.includes('"msg":"token refused"') && l.includes('"correlationId":"rekeyed-1"'),
      );
      const refused = jsonLines(chain.services[next]).filter(
        (l) => l.msg === 'token refused' && l.correlationId === 'rekeyed-1',
      );
      expect(refused.map((l) => l.code)).toEqual(['ERR10003']);
    }
    // The next calls need no retry.
    expect((await chain.call('a', { Authorization: `Bearer ${fresh}` })).status).toBe(200);
    const ma = await metricsOf(chain.services.a.port);
    expect(metric(ma, 'downstream_retries_total{downstream="api-b",reason="invalid_token"}')).toBe(
      1,
    );
  });
});
