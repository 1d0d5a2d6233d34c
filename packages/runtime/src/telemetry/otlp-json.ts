export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  tracestate?: string;
  name: string;
  kind: 'server' | 'client';
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  error: boolean;
  sampled: boolean;
  remoteParent: boolean;
}

const KIND = { server: 2, client: 3 } as const;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;
/** trace.proto SpanFlags: the W3C flags in bits 0-7; bit 8 "has is-remote", bit 9 "is remote". */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

function anyValue(value: string | number | boolean): string {
  if (typeof value === 'string') return `{"stringValue":${JSON.stringify(value)}}`;
  if (typeof value === 'boolean') return `{"boolValue":${value}}`;
  return Number.isInteger(value) ? `{"intValue":"${value}"}` : `{"doubleValue":${value}}`;
}

function keyValues(attributes: Record<string, string | number | boolean>): string {
  let out = '';
  for (const key in attributes) {
    if (out) out += ',';
    out += `{"key":${JSON.stringify(key)},"value":${anyValue(attributes[key])}}`;
  }
  return `[${out}]`;
}

export function unixNano(ms: number): string {
  const micros = Math.round(ms * 1000); // exact as an integer up to 2^53 µs (year 2255)
  return micros === 0 ? '0' : `${micros}000`;
}

/** OTLP's JSON Protobuf encoding, when recorded: the queue holds one string per span. */
export function encodeSpan(s: SpanRecord): string {
  const flags = (s.sampled ? 1 : 0) | HAS_IS_REMOTE | (s.remoteParent ? IS_REMOTE : 0);
  return (
    `{"traceId":"${s.traceId}","spanId":"${s.spanId}"` +
    (s.parentSpanId ? `,"parentSpanId":"${s.parentSpanId}"` : '') +
    (s.tracestate ? `,"traceState":${JSON.stringify(s.tracestate)}` : '') +
    `,"flags":${flags},"name":${JSON.stringify(s.name)},"kind":${KIND[s.kind]}` +
    `,"startTimeUnixNano":"${unixNano(s.startMs)}","endTimeUnixNano":"${unixNano(s.endMs)}"` +
    `,"attributes":${keyValues(s.attributes)}` +
    `,"status":{"code":${s.error ? STATUS_ERROR : STATUS_UNSET}}}`
  );
}

export function exportTraceBody(
  resource: { serviceName: string; attributes?: Record<string, string | number | boolean> },
  scope: { name: string; version: string },
  spans: readonly string[],
): string {
  const attributes = keyValues({ 'service.name': resource.serviceName, ...resource.attributes });
  return (
    `{"resourceSpans":[{"resource":{"attributes":${attributes}},` +
    `"scopeSpans":[{"scope":${JSON.stringify(scope)},"spans":[${spans.join(',')}]}]}]}`
  );
}
