import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as the collector received it (OTLP JSON, checked). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  flags?: number;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, string | number | boolean>;
  status?: { code?: number; message?: string };
  /** `service.name` of the span's resource. */
  service: string;
}

export type CollectorMode = 'accept' | 'unavailable' | 'partial' | 'hang';

export interface OtlpCollector {
  url: string;
  /** `http://127.0.0.1:port/v1/traces` */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every export request: status answered and why it was refused. */
  requests: {
    status: number;
    contentType?: string;
    error?: string;
    headers: http.IncomingHttpHeaders;
  }[];
  mode: CollectorMode;
  /** Resolves when at least `n` spans have been received (a signal, not a sleep). */
  waitForSpans(n: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

const HEX = (n: number) => new RegExp(`^[0-9a-fA-F]{${n}}$`);
const U64 = /^\d{1,20}$/;

/**
 * A stand-in OpenTelemetry collector: OTLP/HTTP with the JSON encoding (the OTLP
 * specification, opentelemetry.io/docs/specs/otlp), answering as the collector's OTLP receiver does:
 * - `POST /v1/traces` only (404 elsewhere, 405 for another method);
 * - `Content-Type: application/json` (`application/x-protobuf` is not decoded here: 415);
 * - the body must be an ExportTraceServiceRequest: lowerCamelCase keys, trace and span ids as
 *   hex (32 and 16 digits), enums as integers, 64-bit integers as decimal strings or numbers,
 *   attribute values as AnyValue; else 400 with a google.rpc.Status body (code 3);
 * - success is 200 with `{}` (a partial success with `partialSuccess.rejectedSpans` in
 *   `partial` mode), `Content-Type: application/json`; `unavailable` answers 503 with
 *   Retry-After; `hang` never answers.
 * It records what it accepted, for a test to assert.
 */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpCollector['requests'] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const hanging = new Set<http.ServerResponse>();
  let mode: CollectorMode = 'accept';

  const status = (res: http.ServerResponse, code: number, body: object, extra = {}) => {
    res.writeHead(code, { 'Content-Type': 'application/json', ...extra });
    res.end(JSON.stringify(body));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const contentType = req.headers['content-type'];
      const note = (code: number, error?: string) =>
        requests.push({ status: code, contentType, error, headers: req.headers });
      if (req.url !== '/v1/traces') {
        note(404, 'path');
        return status(res, 404, { code: 5, message: 'not found' });
      }
      if (req.method !== 'POST') {
        note(405, 'method');
        return status(res, 405, { code: 12, message: 'method not allowed' }, { Allow: 'POST' });
      }
      if (!contentType?.startsWith('application/json')) {
        note(415, 'content type');
        return status(res, 415, { code: 3, message: 'unsupported content type' });
      }
      if (mode === 'hang') {
        note(0, 'hang');
        hanging.add(res);
        return;
      }
      if (mode === 'unavailable') {
        note(503, 'unavailable');
        return status(res, 503, { code: 14, message: 'unavailable' }, { 'Retry-After': '1' });
      }
      let received: ReceivedSpan[];
      try {
        received = decode(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (err) {
        note(400, (err as Error).message);
        return status(res, 400, { code: 3, message: (err as Error).message });
      }
      note(200);
      spans.push(...received);
      for (const w of [...waiters]) {
        if (spans.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
      if (mode === 'partial') {
        return status(res, 200, {
          partialSuccess: { rejectedSpans: '1', errorMessage: 'one span was too old' },
        });
      }
      status(res, 200, {});
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    endpoint: `${url}/v1/traces`,
    spans,
    requests,
    get mode() {
      return mode;
    },
    set mode(m: CollectorMode) {
      mode = m;
    },
    waitForSpans(n, timeoutMs = 5000) {
      if (spans.length >= n) return Promise.resolve(spans);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`collector: ${spans.length} of ${n} spans within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve(spans);
          },
        });
      });
    },
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function list(v: unknown, where: string): unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new Error(`${where} is not a list`);
  return v;
}

function anyValue(v: unknown, where: string): string | number | boolean {
  if (!isObject(v)) throw new Error(`${where} is not an AnyValue`);
  const keys = Object.keys(v);
  if (keys.length !== 1) throw new Error(`${where} holds ${keys.length} values`);
  const [key] = keys;
  const value = v[key];
  switch (key) {
    case 'stringValue':
      if (typeof value !== 'string') throw new Error(`${where}.stringValue`);
      return value;
    case 'boolValue':
      if (typeof value !== 'boolean') throw new Error(`${where}.boolValue`);
      return value;
    case 'intValue':
      if (!(typeof value === 'string' ? /^-?\d+$/.test(value) : Number.isInteger(value))) {
        throw new Error(`${where}.intValue`);
      }
      return Number(value);
    case 'doubleValue':
      if (typeof value !== 'number') throw new Error(`${where}.doubleValue`);
      return value;
    default:
      throw new Error(`${where}: ${key} is not an AnyValue kind used here`);
  }
}

function attributes(v: unknown, where: string): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [i, kv] of list(v, where).entries()) {
    if (!isObject(kv) || typeof kv.key !== 'string') throw new Error(`${where}[${i}] has no key`);
    out[kv.key] = anyValue(kv.value, `${where}[${i}].value`);
  }
  return out;
}

function u64(v: unknown, where: string): string {
  if (typeof v === 'string' && U64.test(v)) return v;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return String(v);
  throw new Error(`${where} is not a fixed64`);
}

/** An ExportTraceServiceRequest, checked field by field; unknown fields are ignored (as OTLP says). */
function decode(body: unknown): ReceivedSpan[] {
  if (!isObject(body)) throw new Error('the body is not an ExportTraceServiceRequest');
  const out: ReceivedSpan[] = [];
  for (const [r, rs] of list(body.resourceSpans, 'resourceSpans').entries()) {
    if (!isObject(rs)) throw new Error(`resourceSpans[${r}]`);
    const resource = isObject(rs.resource)
      ? attributes(rs.resource.attributes, `resourceSpans[${r}].resource.attributes`)
      : {};
    const service = String(resource['service.name'] ?? '');
    for (const [s, ss] of list(rs.scopeSpans, `resourceSpans[${r}].scopeSpans`).entries()) {
      if (!isObject(ss)) throw new Error(`scopeSpans[${s}]`);
      if (ss.scope !== undefined && (!isObject(ss.scope) || typeof ss.scope.name !== 'string')) {
        throw new Error(`scopeSpans[${s}].scope`);
      }
      for (const [i, span] of list(ss.spans, `scopeSpans[${s}].spans`).entries()) {
        const at = `spans[${i}]`;
        if (!isObject(span)) throw new Error(at);
        if (typeof span.traceId !== 'string' || !HEX(32).test(span.traceId)) {
          throw new Error(`${at}.traceId is not 32 hex digits`);
        }
        if (typeof span.spanId !== 'string' || !HEX(16).test(span.spanId)) {
          throw new Error(`${at}.spanId is not 16 hex digits`);
        }
        if (
          span.parentSpanId !== undefined &&
          span.parentSpanId !== '' &&
          (typeof span.parentSpanId !== 'string' || !HEX(16).test(span.parentSpanId))
        ) {
          throw new Error(`${at}.parentSpanId is not 16 hex digits`);
        }
        if (typeof span.name !== 'string') throw new Error(`${at}.name`);
        if (
          !Number.isInteger(span.kind) ||
          (span.kind as number) < 0 ||
          (span.kind as number) > 5
        ) {
          throw new Error(`${at}.kind is not a SpanKind integer`);
        }
        if (span.flags !== undefined && !Number.isInteger(span.flags))
          throw new Error(`${at}.flags`);
        const status = span.status;
        if (
          status !== undefined &&
          (!isObject(status) ||
            (status.code !== undefined && ![0, 1, 2].includes(status.code as number)))
        ) {
          throw new Error(`${at}.status.code is not a StatusCode integer`);
        }
        out.push({
          traceId: span.traceId.toLowerCase(),
          spanId: span.spanId.toLowerCase(),
          ...(span.parentSpanId
            ? { parentSpanId: (span.parentSpanId as string).toLowerCase() }
            : {}),
          ...(typeof span.traceState === 'string' ? { traceState: span.traceState } : {}),
          ...(span.flags !== undefined ? { flags: span.flags as number } : {}),
          name: span.name,
          kind: span.kind as number,
          startTimeUnixNano: u64(span.startTimeUnixNano, `${at}.startTimeUnixNano`),
          endTimeUnixNano: u64(span.endTimeUnixNano, `${at}.endTimeUnixNano`),
          attributes: attributes(span.attributes, `${at}.attributes`),
          ...(isObject(status) ? { status: status as ReceivedSpan['status'] } : {}),
          service,
        });
      }
    }
  }
  return out;
}
