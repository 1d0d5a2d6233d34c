import {
  clientCredentialsToken,
  startTokenServer,
  type TokenServerProcess,
  startOtlpCollector,
  type OtlpCollector,
  EIGHT,
  LETTERS,
  jsonLines,
  startChain,
  type RunningChain,
} from '@chain/testkit';

// W3C Trace Context across the chain, everything real: one trace id in every hop's log lines
// and in the token server's, and (telemetry.yml on) the spans of all four services exported over
// OTLP/HTTP to a collector, linked into one trace.
vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';

describe('one trace across the chain (real processes)', () => {
  let ts: TokenServerProcess;
  let chain: RunningChain;
  let collector: OtlpCollector;
  let user: string;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    ts = await startTokenServer();
    chain = await startChain({
      ts,
      files: () => ({
        'telemetry.yml': `enabled: true\nendpoint: ${collector.endpoint}\nexportIntervalMs: 50\n`,
      }),
    });
    user = await clientCredentialsToken(ts.tokenUrl, 'chain-user', 'chain-user-secret', 'api_a.r');
  });
  afterAll(async () => {
    await Promise.all([ts?.stop(), chain?.stop()]);
    await collector?.close();
  });

  it("the caller's trace id is in every log line of the request, at every hop and at the token server", async () => {
    const answer = await chain.call('a', {
      Authorization: `Bearer ${user}`,
      'X-Correlation-Id': 'traced-1',
      traceparent: `00-${TRACE}-${PARENT}-01`,
      tracestate: 'vendor=opaque',
    });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: EIGHT });
    for (const letter of LETTERS) {
      const p = chain.services[letter];
      await p.waitForLine((l) => l.includes('"correlationId":"traced-1"'));
      const lines = jsonLines(p).filter((l) => l.correlationId === 'traced-1');
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect(l.traceId).toBe(TRACE);
    }
    // The services' own token requests were made for this request: the token server logged its trace
    // (the three lines waited for: they may still be in its 50 ms log buffer).
    let requests = 0;
    await ts.waitForLine(
      (l) =>
        l.includes('"msg":"token request"') && l.includes('"clientId":"api-') && ++requests === 3,
    );
    const tokenLines = jsonLines(ts).filter(
      (l) => l.msg === 'token request' && String(l.clientId).startsWith('api-'),
    );
    expect(tokenLines.map((l) => l.clientId).sort()).toEqual([
      'api-a-client',
      'api-b-client',
      'api-c-client',
    ]);
    for (const l of tokenLines) expect(l.traceId).toBe(TRACE);
  });

  it('exported: 4 server spans and 3 client spans, one trace, each hop the child of the call that reached it', async () => {
    const spans = (await collector.waitForSpans(7)).filter((s) => s.traceId === TRACE);
    expect(spans).toHaveLength(7);
    const server = (letter: string) =>
      spans.find((s) => s.kind === 2 && s.service === `com.networknt.api${letter}-1.0.0`)!;
    const client = (letter: string) =>
      spans.find((s) => s.kind === 3 && s.service === `com.networknt.api${letter}-1.0.0`)!;
    expect(server('a').parentSpanId).toBe(PARENT);
    for (const [from, to] of [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
    ]) {
      expect(client(from).parentSpanId).toBe(server(from).spanId);
      expect(server(to).parentSpanId).toBe(client(from).spanId);
      expect(client(from).attributes['peer.service']).toBe(`api-${to}`);
    }
    for (const s of spans) {
      expect(s.traceState).toBe('vendor=opaque');
      expect(BigInt(s.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(s.startTimeUnixNano));
    }
    expect(client('d')).toBeUndefined();
    expect(server('a').name).toBe('GET /v1/data');
  });

  it('a request without trace context starts one at api-a, followed to api-d', async () => {
    collector.spans.splice(0);
    await chain.call('a', { Authorization: `Bearer ${user}`, 'X-Correlation-Id': 'traced-2' });
    const spans = await collector.waitForSpans(7);
    const ids = new Set(spans.map((s) => s.traceId));
    expect(ids.size).toBe(1);
    const [traceId] = [...ids];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const root = spans.find((s) => s.kind === 2 && s.service === 'com.networknt.apia-1.0.0')!;
    expect(root.parentSpanId).toBeUndefined();
    for (const letter of LETTERS) {
      await chain.services[letter].waitForLine((l) => l.includes('"correlationId":"traced-2"'));
      const lines = jsonLines(chain.services[letter]).filter((l) => l.correlationId === 'traced-2');
      for (const l of lines) expect(l.traceId).toBe(traceId);
    }
  });
});
