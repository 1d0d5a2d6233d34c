/** A finished span as this service records it (OpenTelemetry's span, the fields used here). */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  tracestate?: string;
  name: string;
  kind: 'server' | 'client';
  /** Epoch milliseconds, fractions allowed. */
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  /** The span failed (a 5xx answered, or a call with no answer or an error answer). */
  error: boolean;
  sampled: boolean;
  /** The parent span came from another process (the caller's `traceparent`). */
  remoteParent: boolean;
}

export interface ExportResource {
  serviceName: string;
  attributes?: Record<string, string | number | boolean>;
}

/** OTLP's SpanKind and StatusCode enums (trace.proto). */
const KIND = { server: 2, client: 3 } as const;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;
/** trace.proto SpanFlags: the W3C flags in bits 0-7; bit 8 "has is-remote", bit 9 "is remote". */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

type AnyValue =
  { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

function anyValue(value: string | number | boolean): AnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  // int64 is a decimal string in the JSON mapping.
  return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

const keyValues = (attributes: Record<string, string | number | boolean>) =>
  Object.entries(attributes).map(([key, value]) => ({ key, value: anyValue(value) }));

/** Epoch milliseconds (with fractions) as OTLP's fixed64 nanoseconds, a decimal string. */
export function unixNano(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.round((ms - whole) * 1000);
  return (BigInt(whole) * 1_000_000n + BigInt(micros) * 1000n).toString();
}

/**
 * An `ExportTraceServiceRequest` in OTLP's JSON Protobuf encoding (the OTLP specification,
 * opentelemetry.io/docs/specs/otlp): lowerCamelCase keys, trace and span ids as hex, enums as integers,
 * 64-bit integers as decimal strings.
 */
export function exportTraceRequest(
  resource: ExportResource,
  scope: { name: string; version: string },
  spans: readonly SpanRecord[],
): object {
  return {
    resourceSpans: [
      {
        resource: {
          attributes: keyValues({ 'service.name': resource.serviceName, ...resource.attributes }),
        },
        scopeSpans: [
          {
            scope,
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              ...(s.tracestate ? { traceState: s.tracestate } : {}),
              flags: (s.sampled ? 1 : 0) | HAS_IS_REMOTE | (s.remoteParent ? IS_REMOTE : 0),
              name: s.name,
              kind: KIND[s.kind],
              startTimeUnixNano: unixNano(s.startMs),
              endTimeUnixNano: unixNano(s.endMs),
              attributes: keyValues(s.attributes),
              status: { code: s.error ? STATUS_ERROR : STATUS_UNSET },
            })),
          },
        ],
      },
    ],
  };
}
