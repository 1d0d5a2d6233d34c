import type { IncomingHttpHeaders } from 'node:http';

/** `HttpClient`; a seam to test the call semantics above it on scripted answers. */
export interface Transport {
  request(request: TransportRequest): Promise<TransportResponse>;
}

export interface TransportRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** The whole exchange (connect, answer, body). */
  timeoutMs: number;
  /** A larger answer body fails with `body_too_large` (cut off, not buffered). */
  maxBodyBytes: number;
  freshConnection?: boolean;
}

export interface TransportResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** `stale_connection`: a kept-alive connection reset before any byte of the answer. */
export type TransportFailure =
  'connect_timeout' | 'timeout' | 'body_too_large' | 'stale_connection' | 'network';

/** Its cause, when it has one, is Node's or undici's error (`ECONNREFUSED`, ...). */
export class TransportError extends Error {
  override readonly name = 'TransportError';

  constructor(
    readonly code: TransportFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Why `request` got no answer, to follow the server's name. */
export function noAnswer(err: TransportError, request: TransportRequest): string {
  if (err.code === 'timeout') return `did not answer within ${request.timeoutMs} ms`;
  if (err.code === 'body_too_large') return `answered more than ${request.maxBodyBytes} bytes`;
  const cause = (err.cause as NodeJS.ErrnoException | undefined)?.code;
  return `could not be reached (${typeof cause === 'string' ? cause : err.code})`;
}

/** The transport as fetch (oauth4webapi's): its time-out, answer cap, TLS and failures. */
export function fetchOver(http: Transport, timeoutMs: number, maxBodyBytes: number) {
  type Init = { method: string; headers: Record<string, string>; body?: URLSearchParams | null };
  return async (url: string, { method, headers, body }: Init): Promise<Response> => {
    const request = { method, url: new URL(url), headers, body: body?.toString() };
    const answer = await http.request({ ...request, timeoutMs, maxBodyBytes });
    const fields = Object.entries(answer.headers).flatMap(([name, value = []]) =>
      [value].flat().map((one): [string, string] => [name, one]),
    );
    // An empty body as none: a 204 or 304 may have no other.
    return new Response(answer.body || null, { status: answer.status, headers: fields });
  };
}

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
