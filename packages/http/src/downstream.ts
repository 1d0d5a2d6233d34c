import { STATUS, StatusError, isStatusCode, type StatusCode, type StatusRow } from '@chain/errors';
import { CircuitBreaker, type CircuitState } from './circuit-breaker.js';
import type { Transport, TransportError, TransportResponse } from './transport.js';

/** Why a call was sent again: a reset kept-alive connection here; a refused token or a replayed
 * DPoP proof in `@chain/oauth-client`'s caller. */
export type RetryReason = 'stale_connection' | 'invalid_token' | 'dpop_proof_replayed';

/** What a downstream reports (metrics); none is called on the hot path of a plain call. */
export interface DownstreamEvents {
  circuitChanged?(event: { downstream: string; state: CircuitState; previous: CircuitState }): void;
  circuitRejected?(event: { downstream: string }): void;
  downstreamRetried?(event: { downstream: string; reason: RetryReason }): void;
}

export interface DownstreamOptions {
  /** Its name in our error descriptions, e.g. `api-b`: never its URL (that is in the log). */
  name: string;
  /** Its base URL, or a whole operation URL. */
  url: string;
  timeoutMs: number;
  transport: Transport;
  /** No breaker when absent or errorThreshold is 0. */
  breaker?: { errorThreshold: number; resetTimeoutMs: number };
  now?: () => number;
  events?: DownstreamEvents;
}

export interface DownstreamAnswer {
  response: TransportResponse;
  body: unknown;
}

const MAX_BODY = 1024 * 1024;

/**
 * The codes the catalogue passes on (failures further down the chain), each with our services'
 * descriptions of it as a pattern: the row's text with each argument a short plain word. Any
 * other description (markup, a stack, a URL) is not echoed.
 */
const PASSED_ON = new Map<unknown, { ours: RegExp; named: boolean }>(
  (Object.entries(STATUS) as [StatusCode, StatusRow][])
    .filter(([, row]) => row.passOn)
    .map(([code, { description, passOn }]) => {
      const marker = '\u0000';
      const texts = [description(), description(marker), description(marker, marker)];
      const patterns = texts.map((text) => {
        const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        return `^${escaped.split(marker).join('[A-Za-z0-9._ -]{1,64}')}$`;
      });
      const ours = new RegExp([...new Set(patterns)].join('|'));
      return [code, { ours, named: passOn === 'named' }];
    }),
);

/** Called with GET; the breaker counts no answer and a 5xx not passed on from further down. */
export class Downstream {
  private readonly target: URL;
  /** The last path's URL: a chain calls one path; a path with ids in it is made each time. */
  private last?: { path: string; url: URL };
  readonly breaker?: CircuitBreaker;

  constructor(readonly options: DownstreamOptions) {
    this.target = new URL(options.url);
    const { breaker, events, name } = options;
    if (breaker && breaker.errorThreshold > 0) {
      this.breaker = new CircuitBreaker({
        ...breaker,
        now: options.now,
        onStateChange: (state, previous) =>
          events?.circuitChanged?.({ downstream: name, state, previous }),
      });
    }
  }

  urlOf(path?: string): URL {
    if (path === undefined) return this.target;
    if (this.last?.path === path) return this.last.url;
    const base = this.target.href.replace(/\/+$/, '');
    const url = new URL(base + (path.startsWith('/') ? path : `/${path}`));
    this.last = { path, url };
    return url;
  }

  async send(
    headers: Record<string, string>,
    options: {
      path?: string;
      /** The headers of a resend on a fresh connection, when not `headers` (a DPoP proof). */
      resendHeaders?: () => Record<string, string> | Promise<Record<string, string>>;
    } = {},
  ): Promise<DownstreamAnswer> {
    const { name, timeoutMs, events, transport } = this.options;
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
      const sent = withAccept(headers);
      const url = this.urlOf(options.path);
      const request = { method: 'GET', url, headers: sent, timeoutMs, maxBodyBytes: MAX_BODY };
      answer = await transport.request(request).catch(async (err: TransportError) => {
        if (err.code !== 'stale_connection') throw err;
        events?.downstreamRetried?.({ downstream: name, reason: 'stale_connection' });
        const again = options.resendHeaders ? withAccept(await options.resendHeaders()) : sent;
        return transport.request({ ...request, headers: again, freshConnection: true });
      });
    } catch (err) {
      breaker?.failure();
      const failure = err as TransportError;
      if (failure.code === 'timeout') {
        throw new StatusError('ERR20003', [name, String(timeoutMs)], { cause: err });
      }
      if (failure.code === 'body_too_large') {
        throw new StatusError('ERR20004', [name, failure.message], { cause: err });
      }
      throw new StatusError('ERR20002', [name], { cause: err });
    }
    const body = parseJson(answer.body);
    if (breaker) {
      if (answer.status >= 500 && !PASSED_ON.has(codeOf(body))) breaker.failure();
      else breaker.success();
    }
    return { response: answer, body };
  }

  async getJson(headers: Record<string, string>, path?: string) {
    return this.check(await this.send(headers, { path }), path);
  }

  /** A failure further down the chain passed on with its code (and description, when ours). */
  check(answer: DownstreamAnswer, path?: string): { body: unknown; status: number } {
    const { body, response } = answer;
    const { status } = response;
    if (status >= 200 && status <= 299) return { body, status };
    const { name } = this.options;
    const cause = new Error(
      `${this.urlOf(path).href} answered HTTP ${status}: ${response.body.slice(0, 200)}`,
    );
    const code = codeOf(body);
    const passOn = PASSED_ON.get(code);
    if (passOn) {
      const args = passOn.named ? [`beyond ${name}`] : [];
      const passed = new StatusError(code as StatusCode, args, { cause });
      const description = (body as { description?: unknown }).description;
      if (typeof description === 'string' && passOn.ours.test(description)) {
        passed.body.description = description;
      }
      throw passed;
    }
    const what = isStatusCode(code) ? `HTTP ${status} ${code}` : `HTTP ${status}`;
    throw new StatusError('ERR20004', [name, what], { cause });
  }
}

/** Filled by assignment: faster than a spread. */
function withAccept(headers: Record<string, string>): Record<string, string> {
  const sent: Record<string, string> = { Accept: 'application/json' };
  for (const name in headers) sent[name] = headers[name];
  return sent;
}

const codeOf = (body: unknown) => (body as { code?: unknown } | null)?.code;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
