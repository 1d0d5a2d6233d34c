import type { IncomingHttpHeaders } from 'node:http';

/**
 * How the bytes of a call travel: one request, one answer. `HttpClient` (undici) is the one
 * implementation; the seam lets the call semantics above it (`Downstream`: which failures count,
 * the retry of a reset connection, the circuit breaker; `DownstreamCaller`: the retry with a
 * renewed token) be tested on scripted answers.
 */
export interface Transport {
  request(request: TransportRequest): Promise<TransportResponse>;
}

export interface TransportRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** A request body (a token request's form, a span export's JSON). */
  body?: string;
  /** Longest wait for the whole exchange (connect, answer, body), in milliseconds. */
  timeoutMs: number;
  /** A larger answer body fails with `body_too_large` (the call is cut off, not buffered). */
  maxBodyBytes: number;
  /** A new connection, not a kept-alive one: the retry of a connection found reset. */
  freshConnection?: boolean;
}

export interface TransportResponse {
  status: number;
  /** In Node's shape (`IncomingMessage.headers`). */
  headers: IncomingHttpHeaders;
  /** The body as UTF-8 text. */
  body: string;
}

/**
 * Why a request got no answer:
 * - `connect_timeout`: no connection (TCP and TLS handshake) within client.yml
 *   `request.connectTimeout`
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
