import type { IncomingHttpHeaders } from 'node:http';
import tls from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import {
  TransportError,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport.js';

/** The TLS of every connection: light-4j's client.yml `tls`, its stores read when it loaded. */
export interface ClientTls {
  verifyHostname: boolean;
  loadDefaultTrustStore: boolean;
  tlsVersion?: 'TLSv1.2' | 'TLSv1.3';
  /** The CA certificates trusted (PEM). */
  trustStorePem?: string;
  /** The client certificate and its key, for two-way TLS. */
  keyStorePem?: { key: string; cert: string };
}

/** Codes of a kept-alive connection the server closed (Node's, and undici's own). */
const STALE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);

/** undici's dispatch with a handler of ours (README, "One client: undici"). */
export class HttpClient implements Transport {
  readonly connectTimeoutMs: number;
  newConnection = false;
  private readonly connector: buildConnector.connector;
  private readonly pool: Agent;
  private fresh?: Agent;

  constructor(config: {
    tls: ClientTls;
    request: { connectTimeout: number; enableHttp2: boolean };
  }) {
    this.connectTimeoutMs = config.request.connectTimeout;
    this.connector = buildConnector({
      ...tlsOptions(config.tls),
      timeout: this.connectTimeoutMs,
      allowH2: config.request.enableHttp2,
    });
    this.pool = this.agent(1);
    this.pool.on('connect', () => {
      this.newConnection = true;
      queueMicrotask(() => (this.newConnection = false));
    });
  }

  request(r: TransportRequest): Promise<TransportResponse> {
    const agent = r.freshConnection ? (this.fresh ??= this.agent(0)) : this.pool;
    const call = new Call(r, this);
    agent.dispatch(
      {
        origin: r.url.origin,
        path: r.url.pathname + r.url.search,
        method: r.method as Dispatcher.HttpMethod,
        headers: r.headers,
        body: r.body,
      },
      call,
    );
    return call.result.promise;
  }

  async destroy(): Promise<void> {
    await Promise.all([this.pool.destroy(), this.fresh?.destroy()]);
  }

  /** `pipelining` 1: keep-alive, one call at a time; 0: none kept alive (README, "HTTP/2"). */
  private agent(pipelining: number): Agent {
    return new Agent({
      connect: this.connector,
      connections: 256,
      pipelining,
      // The call has its own time-out.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }
}

/** client.yml `tls` as `tls.connect` options. */
export function tlsOptions(config: ClientTls): tls.ConnectionOptions {
  const options: tls.ConnectionOptions = { rejectUnauthorized: true };
  const own = config.trustStorePem;
  if (own) options.ca = config.loadDefaultTrustStore ? [...tls.rootCertificates, own] : own;
  if (config.tlsVersion) options.minVersion = config.tlsVersion;
  if (!config.verifyHostname) {
    // Only the name check is skipped (light-4j's verifyHostname: false); the chain is verified.
    options.checkServerIdentity = () => undefined;
  }
  if (config.keyStorePem) Object.assign(options, config.keyStorePem);
  return options;
}

const timedOut = (r: TransportRequest) =>
  new TransportError('timeout', `no answer within ${r.timeoutMs} ms`);

/** A failure as a `TransportError`; undici's "other side closed" before an answer as Node's. */
export function failureOf(
  err: Error,
  call: Pick<Call, 'answered' | 'reused' | 'connectTimeoutMs'>,
): TransportError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    const message = `no connection within ${call.connectTimeoutMs} ms`;
    return new TransportError('connect_timeout', message, { cause: err });
  }
  const cause =
    code === 'UND_ERR_SOCKET' && !call.answered
      ? Object.assign(new Error('socket hang up', { cause: err }), { code: 'ECONNRESET' })
      : err;
  const nodeCode = (cause as NodeJS.ErrnoException).code ?? code;
  if (!call.answered && call.reused && STALE_CODES.has(code)) {
    return new TransportError('stale_connection', `kept-alive connection reset (${nodeCode})`, {
      cause,
    });
  }
  return new TransportError('network', cause.message || nodeCode, { cause });
}

class Call implements Dispatcher.DispatchHandler {
  readonly result = Promise.withResolvers<TransportResponse>();
  answered = false;
  /** On a kept-alive connection of the pool (a fresh connection is never one). */
  reused = false;
  readonly connectTimeoutMs: number;
  private readonly timer: NodeJS.Timeout;
  private controller?: Dispatcher.DispatchController;
  private settled = false;
  private status = 0;
  private headers: Buffer[] | IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly r: TransportRequest,
    private readonly client: HttpClient,
  ) {
    this.connectTimeoutMs = client.connectTimeoutMs;
    this.timer = setTimeout(() => this.fail(timedOut(r)), r.timeoutMs);
  }

  fail(err: TransportError): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.result.reject(err);
    if (this.controller && !this.controller.aborted) this.controller.abort(err);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.reused = !this.client.newConnection && this.r.freshConnection !== true;
    // Timed out while waiting for its connection: cut off before it is sent.
    if (this.settled) controller.abort(timedOut(this.r));
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
  ): void {
    this.answered = true;
    this.status = status;
    // The raw lines when undici keeps them (HTTP/1.1): Node's shape is made from them if read.
    const raw = controller.rawHeaders;
    this.headers = Array.isArray(raw) && Buffer.isBuffer(raw[0]) ? (raw as Buffer[]) : headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const max = this.r.maxBodyBytes;
    this.size += chunk.length;
    if (this.size <= max) this.chunks.push(chunk);
    else this.fail(new TransportError('body_too_large', `a body larger than ${max} bytes`));
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    const body =
      this.chunks.length === 1
        ? this.chunks[0].toString('utf8')
        : Buffer.concat(this.chunks).toString('utf8');
    const raw = this.headers;
    let nodeShaped: IncomingHttpHeaders | undefined;
    this.result.resolve({
      status: this.status,
      body,
      get headers() {
        return (nodeShaped ??= Array.isArray(raw) ? nodeHeaders(raw) : raw);
      },
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (!this.settled) this.fail(failureOf(err, this));
  }
}

/** Of these repeated headers Node keeps the first. */
const FIRST_WINS = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/** Raw header lines as Node's `IncomingMessage.headers`: Latin-1 text, repeats as Node. */
function nodeHeaders(raw: Buffer[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toString('latin1').toLowerCase();
    const value = raw[i + 1].toString('latin1');
    const seen = headers[name];
    if (name === 'set-cookie') {
      ((headers[name] ??= []) as string[]).push(value);
    } else if (seen === undefined) {
      headers[name] = value;
    } else if (!FIRST_WINS.has(name)) {
      headers[name] = `${seen as string}${name === 'cookie' ? '; ' : ', '}${value}`;
    }
  }
  return headers;
}
