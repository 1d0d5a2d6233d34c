import { randomFillSync, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** W3C Trace Context `traceparent`; a version after 00 may carry more after a `-` (3.2.4). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';
const ZERO = 0x30;
const DASH = 0x2d;
/** A `tracestate` list member: `key=value` as 3.3.1 defines them. */
const TRACESTATE_MEMBER =
  /^(?:[a-z0-9][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const TRACESTATE_MAX_MEMBERS = 32;

/** Random ids from a pool: one 4 KB read of the random source serves 512 span ids. */
const POOL = Buffer.allocUnsafe(4096);
let offset = POOL.length;

function randomHex(bytes: number): string {
  if (offset + bytes > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const hex = POOL.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

/** 16 random bytes as 32 lower-case hex digits, never all zero (W3C Trace Context 3.2.2.3). */
export function newTraceId(): string {
  const id = randomHex(16);
  return id === ZERO_TRACE ? newTraceId() : id;
}

/** 8 random bytes as 16 lower-case hex digits, never all zero (3.2.2.4). */
export function newSpanId(): string {
  const id = randomHex(8);
  return id === ZERO_SPAN ? newSpanId() : id;
}

/**
 * The ids that follow a request through the chain and into its log lines: light-4j's
 * `X-Correlation-Id` and `X-Traceability-Id`, and W3C Trace Context. Made once per request.
 */
export class Trace {
  private span?: string;

  constructor(
    readonly correlationId: string,
    readonly traceabilityId: string | undefined,
    readonly traceId: string,
    /** The caller's span; none when the trace starts here. */
    readonly parentSpanId: string | undefined,
    /** The caller's flag; for a trace that starts here, set by the tracing stage. */
    public sampled: boolean,
    /** The caller's, when valid: passed on unchanged. */
    readonly tracestate: string | undefined,
  ) {}

  /** This service's span of the request (made when first asked). */
  get spanId(): string {
    return (this.span ??= newSpanId());
  }

  /** Sets a new child span's `traceparent` (and `tracestate`) on a call's headers; its id. */
  addChild(headers: Record<string, string>): string {
    const spanId = newSpanId();
    headers.traceparent = `00-${this.traceId}-${spanId}-${this.sampled ? '01' : '00'}`;
    if (this.tracestate) headers.tracestate = this.tracestate;
    return spanId;
  }

  /** The W3C headers of a new child span (a token request made for this request). */
  childHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    this.addChild(headers);
    return headers;
  }
}

/**
 * light-4j's correlation and traceability handlers, and W3C Trace Context: `X-Correlation-Id`
 * kept when sane (letters, digits, `._:-`, at most 128) else generated, `X-Traceability-Id` kept
 * when sane; a valid `traceparent` gives the trace, the parent span and the sampled flag, and its
 * valid `tracestate` is kept (an invalid one dropped whole); without one the trace starts here
 * (and `tracestate` is ignored, 3.3).
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

/** Whether `text` from `from` to before `to` is lower-case hex digits only. */
function isLowerHex(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
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
