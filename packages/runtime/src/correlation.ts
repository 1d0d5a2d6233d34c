import { randomFillSync, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';
const DASH = 0x2d;
/** A `tracestate` list member: `key=value` as 3.3.1 defines them. */
const TRACESTATE_MEMBER =
  /^(?:[a-z0-9][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const TRACESTATE_MAX_MEMBERS = 32;

/** One read of the random source serves 512 span ids. */
const POOL = Buffer.allocUnsafe(4096);
let offset = POOL.length;

/** Random lower-case hex, never all zero (W3C Trace Context 3.2.2.3 and 3.2.2.4). */
function randomHex(bytes: number, zero: string): string {
  if (offset + bytes > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const hex = POOL.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex === zero ? randomHex(bytes, zero) : hex;
}

export const newTraceId = (): string => randomHex(16, ZERO_TRACE);

export const newSpanId = (): string => randomHex(8, ZERO_SPAN);

export class Trace {
  private span?: string;

  constructor(
    readonly correlationId: string,
    readonly traceabilityId: string | undefined,
    readonly traceId: string,
    readonly parentSpanId: string | undefined,
    /** The caller's flag; for a trace that starts here, set by the tracing stage. */
    public sampled: boolean,
    readonly tracestate: string | undefined,
  ) {}

  get spanId(): string {
    return (this.span ??= newSpanId());
  }

  addChild(headers: Record<string, string>): string {
    const spanId = newSpanId();
    headers.traceparent = `00-${this.traceId}-${spanId}-${this.sampled ? '01' : '00'}`;
    if (this.tracestate) headers.tracestate = this.tracestate;
    return spanId;
  }

  childHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    this.addChild(headers);
    return headers;
  }
}

const safeId = (header: string | string[] | undefined) =>
  typeof header === 'string' && SAFE_ID.test(header) ? header : undefined;

/** An invalid `tracestate` is dropped whole; without a `traceparent` it is ignored (3.3). */
export function readTrace(headers: IncomingHttpHeaders): Trace {
  const parent = parseTraceparent(headers.traceparent);
  return new Trace(
    safeId(headers['x-correlation-id']) ?? randomUUID(),
    safeId(headers['x-traceability-id']),
    parent?.traceId ?? newTraceId(),
    parent?.parentId,
    parent?.sampled ?? false,
    parent && parseTracestate(headers.tracestate),
  );
}

function isLowerHex(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** A later version than 00 may carry more after a `-` (3.2.4); `ff` is invalid. */
export function parseTraceparent(header: string | string[] | undefined) {
  if (typeof header !== 'string') return undefined;
  const h = header.length === 55 ? header : header.trim();
  if (
    h.length < 55 ||
    !isLowerHex(h, 0, 2) ||
    h.charCodeAt(2) !== DASH ||
    !isLowerHex(h, 3, 35) ||
    h.charCodeAt(35) !== DASH ||
    !isLowerHex(h, 36, 52) ||
    h.charCodeAt(52) !== DASH ||
    !isLowerHex(h, 53, 55)
  ) {
    return undefined;
  }
  const version = h.slice(0, 2);
  if (version === 'ff' || (h.length > 55 && (version === '00' || h.charCodeAt(55) !== DASH))) {
    return undefined;
  }
  const traceId = h.slice(3, 35);
  const parentId = h.slice(36, 52);
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  return { traceId, parentId, sampled: (parseInt(h.slice(53, 55), 16) & 1) === 1 };
}

export function parseTracestate(header: string | string[] | undefined): string | undefined {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!text || text.length > 8192) return undefined;
  const members = text
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  if (members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS) return undefined;
  if (!members.every((member) => TRACESTATE_MEMBER.test(member))) return undefined;
  const keys = new Set(members.map((member) => member.slice(0, member.indexOf('='))));
  if (keys.size < members.length) return undefined; // a key given twice
  return members.join(',');
}
