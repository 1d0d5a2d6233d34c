import request from 'supertest';
import {
  devSigningKey,
  mintToken,
  httpsStub,
  json,
  type Stub,
  startOtlpCollector,
  type OtlpCollector,
  SECURITY_ON,
  CERTS,
} from '@chain/testkit';
import { createLogger } from '@chain/runtime';
import { createChainApp } from '../src/index.js';
import { serviceConfig, silentLogger } from '../../../test/support/service-config.js';

const primary = devSigningKey('100');
const userToken = mintToken(primary, { clientId: 'chain-user', scope: ['api_b.r'] });
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const OK = ['API C: Message 1'];
const EXPECTED = ['API C: Message 1', 'API B: Message 1', 'API B: Message 2'];

describe('api-b calling api-c: traces, the breaker, the retry with a renewed token, client metrics', () => {
  let tokenServer: Stub;
  let downstream: Stub;
  let collector: OtlpCollector;
  let downstreamAnswer: (res: import('node:http').ServerResponse) => void;
  let issued = 0;
  beforeAll(async () => {
    tokenServer = await httpsStub((_req, res) =>
      json(res, 200, { access_token: `own-${++issued}`, token_type: 'bearer', expires_in: 600 }),
    );
    downstream = await httpsStub((_req, res) => downstreamAnswer(res));
    collector = await startOtlpCollector();
  });
  afterAll(async () => {
    await Promise.all([tokenServer.close(), downstream.close(), collector.close()]);
  });
  beforeEach(() => {
    tokenServer.requests.splice(0);
    downstream.requests.splice(0);
    collector.spans.splice(0);
    issued = 0;
    downstreamAnswer = (res) => json(res, 200, OK);
  });

  const files = (extra: Record<string, string> = {}, request = '') => ({
    'security.yml': SECURITY_ON,
    'api_b.yml': `api_c_host: ${downstream.url}\napi_c_path: /v1/data\n`,
    'client.yml': `tls:
  trustStore: ${CERTS}/ca.crt
request:
  timeout: 1000
${request}oauth:
  token:
    server_url: ${tokenServer.url}
    client_credentials:
      uri: /oauth2/token
      client_id: api-b-client
      scope: [api_c.r, api_c.w]
`,
    ...extra,
  });
  const app = (f: Record<string, string> = files(), logger = silentLogger()) =>
    createChainApp('B')(serviceConfig('api-b', f), logger);
  const call = (a: ReturnType<typeof app>, headers: Record<string, string> = {}) =>
    request(a.listener)
      .get('/v1/data')
      .set({ Authorization: `Bearer ${userToken}`, ...headers });

  it("W3C trace context: the caller's trace goes on as a child span, tracestate unchanged", async () => {
    const res = await call(app(), {
      traceparent: `00-${TRACE}-${PARENT}-01`,
      tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
    });
    expect(res.status).toBe(200);
    const sent = downstream.requests[0];
    expect(sent.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    expect(sent.traceparent).not.toContain(PARENT);
    expect(sent.tracestate).toBe('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
    // The token request made for this request carries the same trace.
    expect(tokenServer.requests[0].traceparent).toMatch(
      new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`),
    );
    expect(tokenServer.requests[0].traceparent).not.toBe(sent.traceparent);
  });

  it('no trace context from the caller: one is started here (not sampled), an invalid one is replaced', async () => {
    const a = app();
    await call(a);
    await call(a, { traceparent: 'garbage', tracestate: 'a=1' });
    const [first, second] = downstream.requests;
    expect(first.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(second.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(first.traceparent!.slice(3, 35)).not.toBe(second.traceparent!.slice(3, 35));
    expect(second.tracestate).toBeUndefined();
  });

  it('every log line of the request carries its trace id: the audit line and a downstream failure', async () => {
    const raw: string[] = [];
    const logger = createLogger('api-b', 'debug', { write: (l: string) => raw.push(l) });
    downstreamAnswer = (res) => json(res, 500, { code: 'ERR10010' });
    const res = await call(app(files(), logger), { traceparent: `00-${TRACE}-${PARENT}-00` });
    expect(res.status).toBe(502);
    const lines = raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    const ofRequest = lines.filter((l) => l.correlationId !== undefined);
    expect(ofRequest.map((l) => l.msg)).toEqual([
      'jwt verified',
      'chain request',
      'Downstream service api-c answered HTTP 500 ERR10010',
    ]);
    for (const l of ofRequest) expect(l.traceId).toBe(TRACE);
  });

  it('telemetry.yml on: a server span and a client span per request, exported to the collector', async () => {
    const a = app(
      files({
        'telemetry.yml': `enabled: true\nendpoint: ${collector.endpoint}\nexportIntervalMs: 20\n`,
      }),
    );
    a.exporter!.start();
    try {
      await call(a, { traceparent: `00-${TRACE}-${PARENT}-01` });
      const spans = await collector.waitForSpans(2);
      const server = spans.find((s) => s.kind === 2)!;
      const client = spans.find((s) => s.kind === 3)!;
      expect(server).toMatchObject({
        traceId: TRACE,
        parentSpanId: PARENT,
        name: 'GET /v1/data',
        service: 'com.networknt.apib-1.0.0',
        attributes: expect.objectContaining({
          'http.request.method': 'GET',
          'http.route': '/v1/data',
          'http.response.status_code': 200,
          'url.scheme': 'http',
        }),
        status: { code: 0 },
      });
      expect(client).toMatchObject({
        traceId: TRACE,
        parentSpanId: server.spanId,
        name: 'GET',
        attributes: expect.objectContaining({
          'peer.service': 'api-c',
          'url.full': `${downstream.url}/v1/data`,
          'http.response.status_code': 200,
        }),
      });
      // The downstream saw the client span as its parent.
      expect(downstream.requests[0].traceparent).toBe(`00-${TRACE}-${client.spanId}-01`);
      expect(BigInt(server.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(client.endTimeUnixNano));

      // A caller that did not sample: nothing exported (parent-based), the flag goes on as 00.
      collector.spans.splice(0);
      await call(a, { traceparent: `00-${TRACE}-${PARENT}-00` });
      // A trace that starts here is sampled when exporting, and a failed call is an error span.
      downstreamAnswer = (res) => json(res, 503, { code: 'ERR20006' });
      const failed = await call(a);
      expect(failed.status).toBe(502);
      const root = await collector.waitForSpans(2);
      expect(root.every((s) => s.traceId !== TRACE)).toBe(true);
      expect(root.find((s) => s.kind === 2)).toMatchObject({
        status: { code: 2 },
        attributes: expect.objectContaining({ 'http.response.status_code': 502 }),
      });
      expect(root.find((s) => s.kind === 3)).toMatchObject({
        status: { code: 2 },
        attributes: expect.objectContaining({ 'error.type': 'ERR20004' }),
      });
      expect(downstream.requests[1].traceparent).toMatch(/-00$/);
      expect(downstream.requests[2].traceparent).toMatch(/-01$/);
    } finally {
      await a.exporter!.stop();
    }
  });

  it('a downstream that refuses our own token (401 ERR10003) is called once more with a renewed one', async () => {
    let refused = 0;
    downstreamAnswer = (res) => {
      if (refused++ === 0) json(res, 401, { code: 'ERR10003' });
      else json(res, 200, OK);
    };
    const a = app(files({ 'prometheus.yml': 'enabled: true\n' }));
    const res = await call(a);
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: EXPECTED });
    expect(downstream.requests.map((r) => r['x-scope-token'])).toEqual([
      'Bearer own-1',
      'Bearer own-2',
    ]);
    expect(downstream.requests.map((r) => r.authorization)).toEqual(
      Array(2).fill(`Bearer ${userToken}`),
    );
    const metrics = (await request(a.listener).get('/metrics')).text;
    expect(metrics).toContain(
      'downstream_retries_total{downstream="api-c",reason="invalid_token"} 1',
    );
    expect(metrics).toContain('token_renewals_total{clientId="api-b-client",trigger="cold"} 1');
    expect(metrics).toContain(
      'token_renewals_total{clientId="api-b-client",trigger="invalid_token"} 1',
    );
  });

  it('the breaker: failures in a row open it, calls fail at once (503 ERR20011, counted), a trial closes it', async () => {
    let t = 0;
    const realNow = Date.now;
    Date.now = () => realNow() + t;
    try {
      const a = app(files({ 'prometheus.yml': 'enabled: true\n' }), silentLogger());
      downstreamAnswer = (res) => json(res, 500, { code: 'ERR10010' });
      expect((await call(a)).status).toBe(502);
      expect((await call(a)).status).toBe(502);
      const before = downstream.requests.length;
      const fast = await call(a);
      expect(fast.status).toBe(503);
      expect(fast.headers['retry-after']).toBe('7');
      expect(fast.body).toEqual({
        statusCode: 503,
        code: 'ERR20011',
        message: 'DOWNSTREAM_CIRCUIT_OPEN',
        description: 'Downstream service api-c is not called for now: it failed too often in a row',
      });
      expect(downstream.requests.length).toBe(before); // not called
      let metrics = (await request(a.listener).get('/metrics')).text;
      expect(metrics).toContain('circuit_state{downstream="api-c"} 2');
      expect(metrics).toContain('circuit_opened_total{downstream="api-c"} 1');
      expect(metrics).toContain('circuit_rejected_total{downstream="api-c"} 1');
      downstreamAnswer = (res) => json(res, 200, OK);
      t = 7000; // client.yml request.resetTimeout (default 7000)
      expect((await call(a)).status).toBe(200);
      metrics = (await request(a.listener).get('/metrics')).text;
      expect(metrics).toContain('circuit_state{downstream="api-c"} 0');
    } finally {
      Date.now = realNow;
    }
  });

  it('client.yml request keys reach the breaker: errorThreshold 1 opens at the first failure, 0 never', async () => {
    downstreamAnswer = (res) => json(res, 500, { code: 'ERR10010' });
    const one = app(files({}, '  errorThreshold: 1\n  resetTimeout: 60000\n'));
    expect((await call(one)).status).toBe(502);
    expect((await call(one)).body.code).toBe('ERR20011');
    const never = app(files({}, '  errorThreshold: 0\n'));
    for (let i = 0; i < 4; i++) expect((await call(never)).body.code).toBe('ERR20004');
  });
});
