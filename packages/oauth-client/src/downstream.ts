import type { IncomingHttpHeaders } from 'node:http';
import { STATUS, StatusError, isStatusCode, type StatusCode } from '@chain/errors';
import { CircuitBreaker } from './circuit-breaker';
import type { ClientEvents } from './client-events';
import type { Transport, TransportError, TransportResponse } from './transport';

export interface DownstreamOptions {
  /**
   * The downstream's name in our error descriptions, e.g. `api-b`: a caller learns which service
   * failed, never its internal URL (the URL is in the log line).
   */
  name: string;
  /** URL of the downstream: its base (`https://api-b:7442`) or a whole operation URL. */
  url: string;
  /** client.yml `request.timeout`: the whole call (connect, answer, body). */
  timeoutMs: number;
  /** How the bytes go: the service's `HttpClient`. */
  transport: Transport;
  /** Largest body accepted from the downstream (default 1 MiB); a larger one is ERR20004. */
  maxBodyBytes?: number;
  /** client.yml `request.errorThreshold` and `resetTimeout`: the circuit breaker; none when absent. */
  breaker?: { errorThreshold: number; resetTimeoutMs: number };
  now?: () => number;
  events?: ClientEvents;
}

/** One answer of the downstream, whatever its status. */
export interface DownstreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as text (for the log), and parsed: JSON when it is JSON, else the text. */
  text: string;
  body: unknown;
}

const DEFAULT_MAX_BODY = 1024 * 1024;

/** A transport's answer with its body parsed; its headers read from it only when asked for. */
class Answer implements DownstreamAnswer {
  readonly status: number;
  readonly text: string;

  constructor(
    private readonly response: TransportResponse,
    readonly body: unknown,
  ) {
    this.status = response.status;
    this.text = response.body;
  }

  get headers(): IncomingHttpHeaders {
    return this.response.headers;
  }
}

/** Codes that already describe a failure further down the chain: passed on unchanged. */
const PASS_THROUGH: readonly StatusCode[] = [
  'ERR10009',
  'ERR10079',
  'ERR20002',
  'ERR20003',
  'ERR20004',
  'ERR20005',
  'ERR20011',
];

/**
 * The descriptions a service of ours writes for each passed-on code, as patterns: the row's text
 * with each argument a short plain word (a service name, a kid, a number, `HTTP 502 ERR20002`).
 * A description that does not match (markup, a stack, a URL, 20 KB of anything) is not echoed.
 */
const OUR_DESCRIPTIONS = new Map(
  PASS_THROUGH.map((code) => {
    const row = STATUS[code].description as (...args: string[]) => string;
    const marker = '\u0000';
    const patterns = [row(), row(marker), row(marker, marker)].map((text) => {
      const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return `^${escaped.split(marker).join('[A-Za-z0-9._ -]{1,64}')}$`;
    });
    return [code, new RegExp([...new Set(patterns)].join('|'))];
  }),
);

/** Our own words for a passed-on code whose description was not one of ours. */
const fallbackArgs = (code: StatusCode, name: string): string[] =>
  code === 'ERR20005' || code === 'ERR10009' ? [] : [`beyond ${name}`];

const IDEMPOTENT = new Set(['GET', 'HEAD']);

/**
 * One downstream service and how it is called: every failure becomes a catalogue StatusError
 * that keeps its cause (for the log), and the service heals by itself.
 *
 * - No connection within client.yml `request.connectTimeout`, refused or unreachable: ERR20002; no whole answer
 *   within `timeoutMs`: ERR20003; a body over `maxBodyBytes`: ERR20004.
 * - A kept-alive connection the downstream closed while it sat idle (reset when reused) is sent
 *   again once, on a fresh connection, for a GET or HEAD: never seen by the caller.
 * - A circuit breaker (`breaker`): the downstream's own failures in a row (no connection, no
 *   answer in time, a 5xx that is not a failure passed on from further down) open it; while
 *   open, calls fail at once with 503 ERR20011 (`Retry-After`) without touching the network;
 *   after the reset time one trial call closes or reopens it.
 * - `getJson`: a non-2xx answer is ERR20004; a failure further down the chain (one of our codes
 *   for it) is passed on with its code unchanged, its description too when it is one of ours,
 *   else in our words. Nothing else of the downstream's answer reaches the caller.
 *
 * The bytes go through a `Transport` (the service's `HttpClient`); nothing here knows how.
 */
export class Downstream {
  private readonly target: URL;
  /** The URL of each path called so far (a chain calls one or a few): parsed once each. */
  private readonly urls = new Map<string, URL>();
  private readonly transport: Transport;
  readonly breaker?: CircuitBreaker;

  constructor(readonly options: DownstreamOptions) {
    this.target = new URL(options.url);
    this.transport = options.transport;
    const { breaker, events, name } = options;
    if (breaker && breaker.errorThreshold > 0) {
      this.breaker = new CircuitBreaker({
        errorThreshold: breaker.errorThreshold,
        resetTimeoutMs: breaker.resetTimeoutMs,
        now: options.now,
        onStateChange: events?.circuitChanged
          ? (state, previous) => events.circuitChanged!({ downstream: name, state, previous })
          : undefined,
      });
    }
  }

  /** The URL a call of `path` goes to: the base URL's, or the base with `path` appended. */
  urlOf(path?: string): URL {
    if (path === undefined) return this.target;
    let url = this.urls.get(path);
    if (!url) {
      const base = this.target.href.replace(/\/+$/, '');
      url = new URL(base + (path.startsWith('/') ? path : `/${path}`));
      // Paths made per request (ids in them) must not grow the map without end.
      if (this.urls.size >= 256) this.urls.clear();
      this.urls.set(path, url);
    }
    return url;
  }

  /**
   * Sends one request and gives its answer, whatever its status; rejects with a StatusError
   * when there is none (ERR20002, ERR20003, ERR20004) or the circuit is open (ERR20011).
   */
  async send(
    headers: Record<string, string>,
    options: {
      method?: string;
      path?: string;
      /**
       * The headers of the one resend on a fresh connection (a kept-alive one found reset):
       * made anew when a header may be sent once only (a DPoP proof); `headers` otherwise.
       */
      resendHeaders?: () => Record<string, string> | Promise<Record<string, string>>;
    } = {},
  ): Promise<DownstreamAnswer> {
    const { name, timeoutMs, events } = this.options;
    const breaker = this.breaker;
    if (breaker && !breaker.acquire()) {
      events?.circuitRejected?.({ downstream: name });
      const seconds = Math.max(1, Math.ceil(breaker.retryInMs() / 1000));
      throw new StatusError('ERR20011', [name], {
        headers: { 'Retry-After': String(seconds) },
        cause: new Error(`circuit of ${name} open; next trial call in ${seconds} s`),
      });
    }
    let answer: TransportResponse;
    try {
      const url = this.urlOf(options.path);
      answer = await this.attempt(headers, options.method ?? 'GET', url, options.resendHeaders);
    } catch (err) {
      breaker?.failure();
      const failure = err as TransportError;
      if (failure.kind === 'timeout') {
        throw new StatusError('ERR20003', [name, String(timeoutMs)], { cause: err });
      }
      if (failure.kind === 'body_too_large') {
        throw new StatusError('ERR20004', [name, failure.message], { cause: err });
      }
      throw new StatusError('ERR20002', [name], { cause: err });
    }
    const body = parseJson(answer.body);
    if (breaker) {
      if (isOwnFailure(answer.status, body)) breaker.failure();
      else breaker.success();
    }
    return new Answer(answer, body);
  }

  /** A JSON GET: the 2xx answer, or the StatusError of `check`. */
  async getJson(
    headers: Record<string, string>,
    path?: string,
  ): Promise<{ body: unknown; status: number }> {
    return this.check(await this.send(headers, { path }), path);
  }

  /** A 2xx answer as it is; any other as the StatusError the caller gets (see the class). */
  check(answer: DownstreamAnswer, path?: string): { body: unknown; status: number } {
    const { status, body, text } = answer;
    if (status >= 200 && status <= 299) return { body, status };
    const { name } = this.options;
    const cause = new Error(
      `${this.urlOf(path).href} answered HTTP ${status}: ${text.slice(0, 200)}`,
    );
    const code = (body as { code?: unknown } | null)?.code;
    if (isStatusCode(code) && PASS_THROUGH.includes(code)) {
      const passed = new StatusError(code, fallbackArgs(code, name), { cause });
      const description = (body as { description?: unknown }).description;
      if (typeof description === 'string' && OUR_DESCRIPTIONS.get(code)!.test(description)) {
        passed.body.description = description;
      }
      throw passed;
    }
    // Our own code for the refusal (ERR10000 …) is worth telling; anything else is not echoed.
    const what = isStatusCode(code) ? `HTTP ${status} ${code}` : `HTTP ${status}`;
    throw new StatusError('ERR20004', [name, what], { cause });
  }

  /** One request; a kept-alive connection found reset is tried once more on a fresh one. */
  private async attempt(
    headers: Record<string, string>,
    method: string,
    url: URL,
    resendHeaders?: () => Record<string, string> | Promise<Record<string, string>>,
  ): Promise<TransportResponse> {
    const { timeoutMs, maxBodyBytes = DEFAULT_MAX_BODY } = this.options;
    const request = { method, url, headers: withAccept(headers), timeoutMs, maxBodyBytes };
    try {
      return await this.transport.request(request);
    } catch (err) {
      if ((err as TransportError).kind !== 'stale_connection' || !IDEMPOTENT.has(method)) {
        throw err;
      }
      this.options.events?.downstreamRetried?.({
        downstream: this.options.name,
        reason: 'stale_connection',
      });
      const again = resendHeaders ? withAccept(await resendHeaders()) : request.headers;
      return this.transport.request({ ...request, headers: again, freshConnection: true });
    }
  }
}

/** The headers of a call with `Accept`, filled by assignment (a spread costs more a call). */
function withAccept(headers: Record<string, string>): Record<string, string> {
  const sent: Record<string, string> = { Accept: 'application/json' };
  for (const name in headers) sent[name] = headers[name];
  return sent;
}

/**
 * A failure of the downstream itself, which the breaker counts: a 5xx answer that is not one of
 * our codes for a failure further down the chain (that downstream answered; the one after it
 * did not). 4xx answers, a 401 included, are answers.
 */
function isOwnFailure(status: number, body: unknown): boolean {
  if (status < 500) return false;
  const code = (body as { code?: unknown } | null)?.code;
  return !(isStatusCode(code) && PASS_THROUGH.includes(code));
}

/** The body as JSON when it is JSON, else the text itself (judged by the caller). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
