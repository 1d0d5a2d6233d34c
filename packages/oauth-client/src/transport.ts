import type { IncomingHttpHeaders } from 'node:http';

/**
 * How the bytes of a downstream call travel: one request, one answer. The semantics of a call
 * (which failures count, the retry of a reset connection, the circuit breaker, the retry with a
 * renewed token, the catalogue errors) live in `Downstream` and `ServiceCall`, above any
 * transport; a transport only moves bytes and reports failures by kind. `HttpsTransport` speaks
 * HTTP/1.1 over node:https (and node:http for an `http://` downstream); another protocol is
 * another implementation of this interface.
 */
export interface Transport {
  request(request: TransportRequest): Promise<TransportResponse>;
}

export interface TransportRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** Longest wait for a connection: TCP connect and TLS handshake, in milliseconds. */
  connectTimeoutMs: number;
  /** Longest wait for the whole exchange (connect, answer, body), in milliseconds. */
  timeoutMs: number;
  /** A larger answer body fails with `body_too_large` (the call is cut off, not buffered). */
  maxBodyBytes: number;
  /** A new connection, not a kept-alive one: the retry of a connection found reset. */
  freshConnection?: boolean;
}

export interface TransportResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as UTF-8 text. */
  body: string;
}

/**
 * Why a request got no answer:
 * - `connect_timeout`: no connection within `connectTimeoutMs`
 * - `timeout`: no whole answer within `timeoutMs`
 * - `body_too_large`: an answer body over `maxBodyBytes`
 * - `stale_connection`: a kept-alive connection was found closed or reset by the server before
 *   any byte of the answer (the request may be sent again on a fresh connection)
 * - `network`: refused, reset, DNS or TLS failure of a new connection
 */
export type TransportFailure =
  'connect_timeout' | 'timeout' | 'body_too_large' | 'stale_connection' | 'network';

export class TransportError extends Error {
  override readonly name = 'TransportError';
  /** Node's error code of the failure (`ECONNREFUSED`, `ERR_TLS_CERT_ALTNAME_INVALID`, …). */
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

/** The codes of a kept-alive connection that the server closed or reset. */
export const STALE_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** The failures every transport reports alike, worded once. */
export const failure = {
  timeout: (r: TransportRequest) =>
    new TransportError('timeout', `no answer within ${r.timeoutMs} ms`),
  connectTimeout: (r: TransportRequest, cause?: unknown) =>
    new TransportError(
      'connect_timeout',
      `no connection within ${r.connectTimeoutMs} ms`,
      cause === undefined ? undefined : { cause },
    ),
  bodyTooLarge: (r: TransportRequest) =>
    new TransportError('body_too_large', `a body larger than ${r.maxBodyBytes} bytes`),
  staleConnection: (code: string, cause: unknown) =>
    new TransportError('stale_connection', `kept-alive connection reset (${code})`, { cause }),
};
