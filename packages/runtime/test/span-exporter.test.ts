import {
  encodeSpan,
  exportTraceBody,
  unixNano,
  type SpanRecord,
} from '../src/telemetry/otlp-json.js';
import { SpanExporter } from '../src/telemetry/span-exporter.js';
import { HttpClient } from '@chain/http';
import { startOtlpCollector, type OtlpCollector } from '@chain/testkit';
import { captureLogger } from './support.js';

const span = (n: number, overrides: Partial<SpanRecord> = {}): SpanRecord => ({
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: (n + 1).toString(16).padStart(16, '0'),
  parentSpanId: '00f067aa0ba902b7',
  name: 'GET /v1/data',
  kind: 'server',
  startMs: 1_700_000_000_000.25,
  endMs: 1_700_000_000_003.5,
  attributes: {
    'http.request.method': 'GET',
    'http.response.status_code': 200,
    ratio: 0.5,
    ok: true,
  },
  error: false,
  sampled: true,
  remoteParent: true,
  ...overrides,
});

/** The service's one HTTP client (an http:// collector: no TLS settings used). */
const http = new HttpClient({
  tls: {
    verifyHostname: true,
    loadDefaultTrustStore: false,
  },
  request: { connectTimeout: 1000, enableHttp2: false },
});
afterAll(() => http.destroy());

const config = (endpoint: string, more = {}) => ({
  enabled: true,
  endpoint,
  headers: { 'X-Api-Key': 'collector-key' },
  exportIntervalMs: 20,
  maxBatchSize: 3,
  maxQueueSize: 5,
  timeoutMs: 300,
  ...more,
});

describe('OTLP JSON encoding', () => {
  it('an ExportTraceServiceRequest as opentelemetry-proto specifies: hex ids, integer enums, nanosecond strings', () => {
    const text = exportTraceBody(
      { serviceName: 'com.networknt.apia-1.0.0', attributes: { 'process.pid': 7 } },
      { name: '@chain/runtime', version: '1.0.0' },
      [
        span(0, { tracestate: 'a=1' }),
        span(1, {
          kind: 'client',
          error: true,
          parentSpanId: undefined,
          remoteParent: false,
          sampled: false,
        }),
      ].map(encodeSpan),
    );
    expect(JSON.parse(text)).toEqual({
      resourceSpans: [
        {
          resource: {
            attributes: [
              { key: 'service.name', value: { stringValue: 'com.networknt.apia-1.0.0' } },
              { key: 'process.pid', value: { intValue: '7' } },
            ],
          },
          scopeSpans: [
            {
              scope: { name: '@chain/runtime', version: '1.0.0' },
              spans: [
                {
                  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
                  spanId: '0000000000000001',
                  parentSpanId: '00f067aa0ba902b7',
                  traceState: 'a=1',
                  flags: 0x301,
                  name: 'GET /v1/data',
                  kind: 2,
                  startTimeUnixNano: '1700000000000250000',
                  endTimeUnixNano: '1700000000003500000',
                  attributes: [
                    { key: 'http.request.method', value: { stringValue: 'GET' } },
                    { key: 'http.response.status_code', value: { intValue: '200' } },
                    { key: 'ratio', value: { doubleValue: 0.5 } },
                    { key: 'ok', value: { boolValue: true } },
                  ],
                  status: { code: 0 },
                },
                expect.objectContaining({ kind: 3, flags: 0x100, status: { code: 2 } }),
              ],
            },
          ],
        },
      ],
    });
    expect(unixNano(0)).toBe('0');
    expect(unixNano(1.001)).toBe('1001000');
    expect(unixNano(0.0004)).toBe('0');
    expect(unixNano(1_795_347_889_578.125)).toBe('1795347889578125000');
    // A string attribute is JSON-escaped; a span name too.
    const odd = JSON.parse(encodeSpan(span(2, { name: 'GET "x"\n', attributes: { q: 'a"b\\' } })));
    expect(odd.name).toBe('GET "x"\n');
    expect(odd.attributes).toEqual([{ key: 'q', value: { stringValue: 'a"b\\' } }]);
  });
});

describe('SpanExporter against a collector (OTLP/HTTP JSON)', () => {
  let collector: OtlpCollector;
  beforeEach(async () => {
    collector = await startOtlpCollector();
  });
  afterEach(() => collector.close());

  it('sends batches the collector accepts, with the configured headers; a full batch goes at once', async () => {
    const log = captureLogger('info');
    const exporter = new SpanExporter({
      config: config(collector.endpoint, { exportIntervalMs: 60_000 }),
      serviceName: 'svc',
      logger: log.logger,
      http: () => http,
    });
    exporter.start();
    for (let i = 0; i < 3; i++) exporter.record(span(i));
    const spans = await collector.waitForSpans(3);
    expect(spans.map((s) => [s.spanId, s.kind, s.service, s.name])).toEqual([
      ['0000000000000001', 2, 'svc', 'GET /v1/data'],
      ['0000000000000002', 2, 'svc', 'GET /v1/data'],
      ['0000000000000003', 2, 'svc', 'GET /v1/data'],
    ]);
    expect(collector.requests[0]).toMatchObject({ status: 200, contentType: 'application/json' });
    expect(collector.requests[0].headers['x-api-key']).toBe('collector-key');
    exporter.record(span(3));
    await exporter.stop(); // flushes what is queued
    expect(collector.spans).toHaveLength(4);
    expect(log.text()).not.toContain('collector-key');
    expect(log.lines().map((l) => l.msg)).toEqual(['telemetry: exporting spans over OTLP/HTTP']);
  });

  it('a full queue drops spans (counted, logged once), never blocking the caller', async () => {
    const log = captureLogger('info');
    const exporter = new SpanExporter({
      config: config(collector.endpoint),
      serviceName: 'svc',
      logger: log.logger,
      http: () => http,
    });
    for (let i = 0; i < 9; i++) exporter.record(span(i)); // not started: nothing leaves
    expect(await exporter.flush()).toEqual({ sent: 3 });
    expect(
      log.lines().find((l) => l.msg === 'telemetry: span queue full; spans dropped'),
    ).toMatchObject({
      dropped: 4,
    });
    await exporter.stop();
    expect(collector.spans).toHaveLength(5);
  });

  it('a collector that is unavailable (503) keeps the batch for later; logged once, and once more when it recovers', async () => {
    const log = captureLogger('info');
    const exporter = new SpanExporter({
      config: config(collector.endpoint),
      serviceName: 'svc',
      logger: log.logger,
      http: () => http,
    });
    collector.mode = 'unavailable';
    exporter.record(span(0));
    expect(await exporter.flush()).toEqual({ failed: 1, retry: true, reason: 'HTTP 503' });
    expect(await exporter.flush()).toEqual({ failed: 1, retry: true, reason: 'HTTP 503' });
    collector.mode = 'accept';
    expect(await exporter.flush()).toEqual({ sent: 1 });
    expect(collector.spans).toHaveLength(1);
    expect(log.lines().map((l) => l.msg)).toEqual([
      'telemetry: span export failed',
      'telemetry: span export resumed',
    ]);
  });

  it('a refused batch (400) is dropped; a collector that does not answer times out; a partial success is logged', async () => {
    const log = captureLogger('info');
    const exporter = new SpanExporter({
      config: config(collector.endpoint),
      serviceName: 'svc',
      logger: log.logger,
      http: () => http,
    });
    exporter.record(span(0, { traceId: 'not-hex' }));
    expect(await exporter.flush()).toEqual({ failed: 1, retry: false, reason: 'HTTP 400' });
    expect(await exporter.flush()).toEqual({ idle: true });
    expect(collector.requests[0].error).toBe('spans[0].traceId is not 32 hex digits');
    collector.mode = 'hang';
    exporter.record(span(1));
    expect(await exporter.flush()).toEqual({
      failed: 1,
      retry: true,
      reason: 'no answer within 300 ms',
    });
    collector.mode = 'partial';
    expect(await exporter.flush()).toEqual({ sent: 1 });
    expect(
      log.lines().find((l) => l.msg === 'telemetry: the collector rejected some spans'),
    ).toMatchObject({
      rejectedSpans: 1,
      errorMessage: 'one span was too old',
    });
    expect(await exporter.flush()).toEqual({ idle: true });
  });

  it('a collector that is down: the batch stays queued, stop gives up after one try', async () => {
    const down = `http://127.0.0.1:${await startOtlpCollector().then(async (c) => (await c.close(), new URL(c.url).port))}/v1/traces`;
    const exporter = new SpanExporter({
      config: config(down),
      serviceName: 'svc',
      logger: captureLogger().logger,
      http: () => http,
    });
    exporter.record(span(0));
    await exporter.stop();
    expect(await exporter.flush()).toMatchObject({ failed: 1, retry: true }); // still queued
  });
});
