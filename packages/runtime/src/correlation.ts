import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { newSpanId, newTraceId } from './trace-ids';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * W3C Trace Context `traceparent`: version, trace-id, parent-id, flags, lower-case hex. Version
 * 00 is exactly 55 characters; a later version may carry more after a `-` (3.2.4), and `ff` is
 * invalid.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO = 0x30;
const DASH = 0x2d;

/** Whether `text` from `from` to before `to` is lower-case hex digits only. */
function isLowerHex(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}
const ZERO_SPAN = '0000000000000000';

/** A `tracestate` list member: `key=value` as 3.3.1 defines them. */
const TRACESTATE_MEMBER =
  /^(?:[a-z0-9][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const TRACESTATE_MAX_MEMBERS = 32;

/**
 * The ids that follow a request through the chain and into every log line about it:
 * light-4j's `X-Correlation-Id` and `X-Traceability-Id`, and W3C Trace Context (`traceparent`,
 * `tracestate`). Made once per request, when its exchange is made.
 */
export class Trace {
  private span?: string;

  constructor(
    /** `X-Correlation-Id`: the caller's when sane, else generated. */
    readonly correlationId: string,
    /** `X-Traceability-Id`: the caller's, when present and sane. */
    readonly traceabilityId: string | undefined,
    /** The W3C trace-id: the caller's `traceparent`'s, else new. */
    readonly traceId: string,
    /** The caller's span (the parent-id of its `traceparent`); none when the trace starts here. */
    readonly parentSpanId: string | undefined,
    /**
     * The sampled flag: the caller's; for a trace that starts here, whether this service
     * exports spans (set by the tracing stage, the only other writer).
     */
    public sampled: boolean,
    /** The caller's `tracestate`, when valid: passed on unchanged. */
    readonly tracestate: string | undefined,
  ) {}

  /** This service's span of the request (made when first asked: no cost when never used). */
  get spanId(): string {
    return (this.span ??= newSpanId());
  }

  /** A child span of this request's: its id and the headers that carry it to the next hop. */
  child(): { spanId: string; headers: Record<string, string> } {
    const headers: Record<string, string> = {};
    return { spanId: this.addChild(headers), headers };
  }

  /**
   * A new child span's W3C headers (`traceparent`, `tracestate` when there is one) set on
   * `headers`, the headers of a downstream call being made; its span id is returned.
   */
  addChild(headers: Record<string, string>): string {
    const spanId = newSpanId();
    headers.traceparent = `00-${this.traceId}-${spanId}-${this.sampled ? '01' : '00'}`;
    if (this.tracestate) headers.tracestate = this.tracestate;
    return spanId;
  }

  /** The W3C headers of a new child span (a token request made for this request). */
  childHeaders(): Record<string, string> {
    return this.child().headers;
  }
}

/**
 * light-4j's correlation and traceability handlers, and W3C Trace Context:
 * - `X-Correlation-Id` is kept when the caller sent a sane one (letters, digits, `._:-`, at most
 *   128) and generated otherwise; `X-Traceability-Id` is kept when present and sane;
 * - a valid `traceparent` gives the trace-id, the parent span and the sampled flag, and its
 *   `tracestate` is kept when valid (else dropped whole); an invalid or missing `traceparent`
 *   starts a new trace here (and its `tracestate` is ignored, as 3.3 says).
 */
export function readTrace(headers: IncomingHttpHeaders): Trace {
  const incoming = headers['x-correlation-id'];
  const correlationId =
    typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
  const traceHeader = headers['x-traceability-id'];
  const traceabilityId =
    typeof traceHeader === 'string' && SAFE_ID.test(traceHeader) ? traceHeader : undefined;
  const parent = parseTraceparent(headers.traceparent);
  if (!parent) {
    return new Trace(correlationId, traceabilityId, newTraceId(), undefined, false, undefined);
  }
  return new Trace(
    correlationId,
    traceabilityId,
    parent.traceId,
    parent.parentId,
    parent.sampled,
    parseTracestate(headers.tracestate),
  );
}

export function parseTraceparent(
  header: string | string[] | undefined,
): { traceId: string; parentId: string; sampled: boolean } | undefined {
  if (typeof header !== 'string' || header.length < 55) return undefined;
  // Version 00 as every hop of ours and OpenTelemetry send it, read without the expression.
  if (
    header.length === 55 &&
    header.charCodeAt(0) === ZERO &&
    header.charCodeAt(1) === ZERO &&
    header.charCodeAt(2) === DASH &&
    header.charCodeAt(35) === DASH &&
    header.charCodeAt(52) === DASH &&
    isLowerHex(header, 3, 35) &&
    isLowerHex(header, 36, 52) &&
    isLowerHex(header, 53, 55)
  ) {
    const traceId = header.slice(3, 35);
    const parentId = header.slice(36, 52);
    if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
    return { traceId, parentId, sampled: (parseInt(header.slice(53), 16) & 1) === 1 };
  }
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, parentId, flags, rest] = match;
  if (version === 'ff') return undefined;
  if (version === '00' && rest !== undefined) return undefined;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  return { traceId, parentId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** The `tracestate` members, joined as one header; undefined when absent or not valid. */
export function parseTracestate(header: string | string[] | undefined): string | undefined {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!text || text.length > 8192) return undefined;
  const members = text
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  if (members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS) return undefined;
  const keys = new Set<string>();
  for (const member of members) {
    if (!TRACESTATE_MEMBER.test(member)) return undefined;
    const key = member.slice(0, member.indexOf('='));
    if (keys.has(key)) return undefined;
    keys.add(key);
  }
  return members.join(',');
}
