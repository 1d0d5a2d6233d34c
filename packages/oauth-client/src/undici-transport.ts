import type { IncomingHttpHeaders } from 'node:http';
import type tls from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import {
  STALE_CODES,
  failure,
  TransportError,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport';

export interface UndiciTransportOptions {
  /** TLS of the connections (client.yml `tls`: trust store, host name check, client key). */
  tls: tls.ConnectionOptions;
  /** Most connections per origin (256, as the keep-alive https agent). */
  connections?: number;
}

/** The options of `tls.connect` a connection takes from client.yml (not an agent's own keys). */
const TLS_KEYS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'rejectUnauthorized',
  'checkServerIdentity',
  'minVersion',
  'maxVersion',
  'ciphers',
  'servername',
] as const;

/** Errors of a kept-alive connection the server closed (undici's own, and Node's socket codes). */
const STALE_CODES_UNDICI = new Set([...STALE_CODES, 'UND_ERR_SOCKET']);

/**
 * HTTP/1.1 over undici: one keep-alive connection pool per origin (`https://` and `http://`),
 * with the TLS options of client.yml. It keeps the contract of `HttpsTransport` (failure kinds,
 * Node's error codes, Node's shape of the response headers) at less CPU per call than
 * node:https's `ClientRequest` and agent. It dispatches with undici's low-level handler: no
 * stream and no promise per call, the raw headers read into Node's shape only when the caller
 * reads them.
 *
 * undici puts a connection back in its pool one turn of the event loop after an answer (so that a
 * server that closes despite keep-alive is seen first): a call made in the same turn as the
 * answer of another takes a second connection, where node:https's agent would reuse the first.
 *
 * A call on a connection made for it that the server resets is `network`; on a kept-alive one,
 * before any byte of the answer, `stale_connection`. undici emits `connect` on its pool right
 * before it writes the first request on the new connection (synchronously), which is how a call
 * tells a new connection from a kept-alive one. A fresh connection (`freshConnection`) comes
 * from a second agent that keeps no connection alive.
 */
export class UndiciTransport implements Transport {
  private readonly tls: tls.ConnectionOptions;
  private readonly connections: number;
  /** The keep-alive agents, by connect time-out (undici's is per agent; one per client.yml). */
  private readonly agents = new Map<number, Agent>();
  private readonly freshAgents = new Map<number, Agent>();
  /** Set while undici writes the first request on a connection it has just made. */
  private newConnection = false;

  constructor(options: UndiciTransportOptions) {
    const own: Record<string, unknown> = {};
    for (const key of TLS_KEYS) {
      if (options.tls[key] !== undefined) own[key] = options.tls[key];
    }
    this.tls = own as tls.ConnectionOptions;
    this.connections = options.connections ?? 256;
  }

  request(r: TransportRequest): Promise<TransportResponse> {
    // A connect time-out not shorter than the whole time-out is the whole time-out.
    const connectTimeout = r.connectTimeoutMs < r.timeoutMs ? r.connectTimeoutMs : r.timeoutMs + 1;
    const agent = this.agentFor(connectTimeout, r.freshConnection === true);
    return new Promise((resolve, reject) => {
      const call = new Call(r, resolve, reject, this);
      call.timer = setTimeout(() => call.fail(failure.timeout(r)), r.timeoutMs);
      agent.dispatch(
        {
          origin: r.url.origin,
          path: r.url.pathname + r.url.search,
          method: r.method as Dispatcher.HttpMethod,
          headers: r.headers,
        },
        call,
      );
    });
  }

  /** Whether the call undici starts now is the first on a connection just made. */
  isNewConnection(): boolean {
    return this.newConnection;
  }

  /** Closes every connection (tests, shutdown). */
  async destroy(): Promise<void> {
    const all = [...this.agents.values(), ...this.freshAgents.values()];
    this.agents.clear();
    this.freshAgents.clear();
    await Promise.all(all.map((a) => a.destroy()));
  }

  private agentFor(connectTimeout: number, fresh: boolean): Agent {
    const agents = fresh ? this.freshAgents : this.agents;
    let agent = agents.get(connectTimeout);
    if (!agent) {
      agent = new Agent({
        connect: { ...this.tls, timeout: connectTimeout },
        connections: this.connections,
        // The whole exchange has the transport's own time-out.
        headersTimeout: 0,
        bodyTimeout: 0,
        // No connection is kept for a fresh call: a new one each time.
        ...(fresh ? { pipelining: 0 } : {}),
      });
      agent.on('connect', () => {
        this.newConnection = true;
        queueMicrotask(() => (this.newConnection = false));
      });
      agents.set(connectTimeout, agent);
    }
    return agent;
  }
}

/** One call: undici's (legacy, unwrapped) dispatch handler, collecting the answer. */
class Call implements Dispatcher.DispatchHandler {
  timer?: NodeJS.Timeout;
  private abort?: (err: Error) => void;
  private settled = false;
  private answered = false;
  private reused = false;
  private status = 0;
  private rawHeaders: Buffer[] = [];
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly r: TransportRequest,
    private readonly resolve: (response: TransportResponse) => void,
    private readonly reject: (err: TransportError) => void,
    private readonly transport: UndiciTransport,
  ) {}

  /** Ends the call with a failure; the request or connection is cut off if under way. */
  fail(err: TransportError): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.reject(err);
    this.abort?.(err);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    this.reused = !this.transport.isNewConnection();
    // Timed out while waiting for its connection: cut off before it is sent.
    if (this.settled) abort(failure.timeout(this.r));
  }

  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    this.answered = true;
    this.status = status;
    // Read into Node's shape only when asked for (a 2xx chain answer never is). undici hands a
    // new array per answer, of buffers over the bytes read, which nothing writes again.
    this.rawHeaders = rawHeaders;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.r.maxBodyBytes) {
      this.fail(failure.bodyTooLarge(this.r));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    const body =
      this.chunks.length === 1
        ? this.chunks[0].toString('utf8')
        : Buffer.concat(this.chunks).toString('utf8');
    this.resolve(new UndiciAnswer(this.status, this.rawHeaders, body));
  }

  onError(err: Error): void {
    if (this.settled) return;
    this.fail(this.classify(err));
  }

  private classify(err: Error): TransportError {
    if (err instanceof TransportError) return err;
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'UND_ERR_CONNECT_TIMEOUT') {
      return this.r.connectTimeoutMs < this.r.timeoutMs
        ? failure.connectTimeout(this.r, err)
        : failure.timeout(this.r);
    }
    // undici's "other side closed" is Node's "socket hang up": the code a caller knows.
    const cause =
      code === 'UND_ERR_SOCKET' && !this.answered
        ? Object.assign(new Error('socket hang up', { cause: err }), { code: 'ECONNRESET' })
        : err;
    const nodeCode = (cause as NodeJS.ErrnoException).code ?? code;
    if (!this.answered && this.reused && !this.r.freshConnection && STALE_CODES_UNDICI.has(code)) {
      return failure.staleConnection(nodeCode, cause);
    }
    return new TransportError('network', cause.message || nodeCode, { cause });
  }
}

/** An answer whose headers are put in Node's shape when first read. */
class UndiciAnswer implements TransportResponse {
  private nodeShaped?: IncomingHttpHeaders;

  constructor(
    readonly status: number,
    private readonly raw: Buffer[],
    readonly body: string,
  ) {}

  get headers(): IncomingHttpHeaders {
    return (this.nodeShaped ??= nodeHeaders(this.raw));
  }
}

/** Of repeated headers Node keeps the first; `set-cookie` is a list; `cookie` joins with `; `. */
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

/**
 * The raw header lines as Node's `IncomingMessage.headers` has them: lower-case names, values as
 * Latin-1 text, repeated headers kept, listed or joined as Node does.
 */
export function nodeHeaders(raw: Buffer[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toString('latin1').toLowerCase();
    const value = raw[i + 1].toString('latin1');
    const seen = headers[name];
    if (name === 'set-cookie') {
      if (seen === undefined) headers[name] = [value];
      else (seen as string[]).push(value);
    } else if (seen === undefined) {
      headers[name] = value;
    } else if (!FIRST_WINS.has(name)) {
      headers[name] = `${seen as string}${name === 'cookie' ? '; ' : ', '}${value}`;
    }
  }
  return headers;
}
