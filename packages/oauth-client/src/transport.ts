import type { IncomingHttpHeaders } from 'node:http';

/**
 * One request, one answer. `HttpClient` is the one implementation; the seam lets the call
 * semantics above it be tested on scripted answers.
 */
export interface Transport {
  request(request: TransportRequest): Promise<TransportResponse>;
}

export interface TransportRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** The whole exchange (connect, answer, body), ms. */
  timeoutMs: number;
  /** A larger answer body fails with `body_too_large` (cut off, not buffered). */
  maxBodyBytes: number;
  /** Not a kept-alive connection: the retry of one found reset. */
  freshConnection?: boolean;
}

export interface TransportResponse {
  status: number;
  /** In Node's shape (`IncomingMessage.headers`). */
  headers: IncomingHttpHeaders;
  /** UTF-8 text. */
  body: string;
}

/**
 * Why a request got no answer: `stale_connection` is a kept-alive connection closed or reset
 * before any byte of the answer (safe to send again on a fresh one); `network` is refused,
 * reset, DNS or TLS failure of a new connection.
 */
export type TransportFailure =
  'connect_timeout' | 'timeout' | 'body_too_large' | 'stale_connection' | 'network';

export class TransportError extends Error {
  override readonly name = 'TransportError';
  /** Node's error code (`ECONNREFUSED`, `ERR_TLS_CERT_ALTNAME_INVALID`, …). */
  readonly code?: string;

  constructor(
    readonly kind: TransportFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    const code = (options?.cause as NodeJS.ErrnoException | undefined)?.code;
    if (typeof code === 'string') this.code = code;
  }
}

/** Why `request` got no answer, as a message naming its server goes on: "… did not answer …". */
export function noAnswer(err: TransportError, request: TransportRequest): string {
  if (err.kind === 'timeout') return `did not answer within ${request.timeoutMs} ms`;
  if (err.kind === 'body_too_large') return `answered more than ${request.maxBodyBytes} bytes`;
  return `could not be reached (${err.code ?? err.kind})`;
}

/** A JSON object's members; undefined for anything else. */
export function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
