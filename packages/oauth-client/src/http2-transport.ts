import type { IncomingHttpHeaders } from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import {
  failure,
  TransportError,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport';

export interface Http2TransportOptions {
  /** TLS of the connections (client.yml `tls`: trust store, host name check, client key). */
  tls: tls.ConnectionOptions;
  /** The transport of origins that do not offer `h2` (and of `http://` ones): HTTP/1.1. */
  fallback: Transport;
  /**
   * How long an origin that did not offer `h2` is called over HTTP/1.1 before it is asked again
   * (default 60 s): a downstream that is upgraded is then used over HTTP/2 without a restart.
   */
  recheckMs?: number;
  /** Clock (tests). */
  now?: () => number;
}

/** How one origin is spoken to, as the last negotiation decided. */
type OriginState =
  | { kind: 'connecting'; ready: Promise<http2.ClientHttp2Session | undefined> }
  | { kind: 'h2'; session: http2.ClientHttp2Session }
  | { kind: 'http/1.1'; until: number };

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

/**
 * HTTP/2 to the origins that offer it, one multiplexed session per origin: the client side of
 * light-4j's `enableHttp2` (client.yml `request.enableHttp2`). Which protocol an origin speaks is
 * decided by ALPN on the first connection (`h2`, else `http/1.1`); an origin that answers
 * `http/1.1` is called through `fallback` and asked again after `recheckMs`.
 *
 * The contract is the `Transport`'s, failure kinds included: no session within
 * `connectTimeoutMs` is `connect_timeout`; no whole answer within `timeoutMs` is `timeout` (the
 * stream is cancelled); a body past `maxBodyBytes` is `body_too_large`; a session found broken
 * before any byte of the answer is `stale_connection` (the caller sends a GET again with
 * `freshConnection`, which opens a new session); anything else is `network`. A session that the
 * server closes (GOAWAY: the server stops or restarts) serves its streams to their end and is
 * replaced for new calls; a stream the server refused unprocessed (REFUSED_STREAM, as a stopping
 * server does) is sent again once on a new session.
 */
export class Http2Transport implements Transport {
  private readonly origins = new Map<string, OriginState>();
  private readonly now: () => number;

  constructor(private readonly options: Http2TransportOptions) {
    this.now = options.now ?? Date.now;
  }

  async request(r: TransportRequest): Promise<TransportResponse> {
    if (r.url.protocol !== 'https:') return this.options.fallback.request(r);
    const started = this.now();
    const deadline = started + r.timeoutMs;
    if (r.freshConnection) this.drop(r.url.origin);
    for (let attempt = 0; ; attempt++) {
      const session = await this.sessionFor(r, started, deadline);
      if (!session) return this.options.fallback.request(r);
      try {
        return await this.stream(session, r, deadline);
      } catch (err) {
        // Refused before the server processed it (a server stopping): safe to send again, once.
        if (!(err instanceof RefusedStream) || attempt > 0) {
          throw err instanceof RefusedStream
            ? new TransportError('network', err.message, { cause: err })
            : err;
        }
        this.forget(r.url.origin, session);
      }
    }
  }

  /** The protocol an origin was found to speak, if it was asked already (tests, logs). */
  protocolOf(origin: string): 'h2' | 'http/1.1' | undefined {
    const state = this.origins.get(origin);
    return state?.kind === 'connecting' ? undefined : state?.kind;
  }

  /** Closes every session (in-flight streams finish first). */
  close(): void {
    for (const state of this.origins.values()) {
      if (state.kind === 'h2') state.session.close();
    }
    this.origins.clear();
  }

  private drop(origin: string): void {
    const state = this.origins.get(origin);
    if (state?.kind === 'h2') this.forget(origin, state.session);
  }

  private async sessionFor(
    r: TransportRequest,
    started: number,
    deadline: number,
  ): Promise<http2.ClientHttp2Session | undefined> {
    const origin = r.url.origin;
    let state = this.origins.get(origin);
    if (state?.kind === 'h2' && !usable(state.session)) {
      this.origins.delete(origin);
      state = undefined;
    }
    if (state?.kind === 'http/1.1' && this.now() >= state.until) {
      this.origins.delete(origin);
      state = undefined;
    }
    if (!state) {
      state = { kind: 'connecting', ready: this.connect(r.url) };
      this.origins.set(origin, state);
    }
    switch (state.kind) {
      case 'h2':
        return state.session;
      case 'http/1.1':
        return undefined;
      case 'connecting': {
        const connectBy = Math.min(deadline, started + r.connectTimeoutMs);
        const kind = connectBy < deadline ? 'connect_timeout' : 'timeout';
        return withDeadline(state.ready, connectBy - this.now(), kind);
      }
    }
  }

  /**
   * One TLS connection offering `h2` and `http/1.1`; the server's choice decides. The socket of
   * an `h2` answer carries the session; an `http/1.1` one is closed (its calls go through the
   * fallback's keep-alive agent).
   */
  private connect(target: URL): Promise<http2.ClientHttp2Session | undefined> {
    const origin = target.origin;
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const port = Number(target.port || 443);
    const ready = new Promise<http2.ClientHttp2Session | undefined>((resolve, reject) => {
      const socket = tls.connect({
        ...this.options.tls,
        host,
        port,
        ...(net.isIP(host) ? {} : { servername: host }),
        ALPNProtocols: ['h2', 'http/1.1'],
      });
      const failed = (err: Error) =>
        reject(new TransportError('network', err.message || String(err), { cause: err }));
      socket.once('error', failed);
      socket.once('secureConnect', () => {
        socket.off('error', failed);
        if (socket.alpnProtocol !== 'h2') {
          socket.destroy();
          this.origins.set(origin, {
            kind: 'http/1.1',
            until: this.now() + (this.options.recheckMs ?? 60_000),
          });
          resolve(undefined);
          return;
        }
        const session = http2.connect(origin, { createConnection: () => socket });
        const drop = () => this.forget(origin, session);
        session.on('goaway', drop);
        session.on('close', drop);
        // An error ends the session ('close' follows); its streams see it too.
        session.on('error', drop);
        // An idle session does not keep the process alive.
        session.unref();
        this.origins.set(origin, { kind: 'h2', session });
        resolve(session);
      });
    });
    // A failed connection is not remembered: the next call connects again.
    ready.catch(() => {
      if (this.origins.get(origin)?.kind === 'connecting') this.origins.delete(origin);
    });
    return ready;
  }

  private forget(origin: string, session: http2.ClientHttp2Session): void {
    const state = this.origins.get(origin);
    if (state?.kind === 'h2' && state.session === session) this.origins.delete(origin);
    if (!session.closed) session.close();
  }

  private stream(
    session: http2.ClientHttp2Session,
    r: TransportRequest,
    deadline: number,
  ): Promise<TransportResponse> {
    return new Promise((resolve, reject) => {
      let req: http2.ClientHttp2Stream;
      try {
        const headers: http2.OutgoingHttpHeaders = {};
        for (const name in r.headers) headers[name] = r.headers[name];
        headers[':method'] = r.method;
        headers[':path'] = r.url.pathname + r.url.search;
        req = session.request(headers);
      } catch (err) {
        // The session closed between the check and the request: as a refusal, sent again.
        reject(new RefusedStream(err instanceof Error ? err.message : String(err)));
        return;
      }
      let answered = false;
      let status = 0;
      let headers: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (err: Error | undefined, answer?: TransportResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) {
          if (!req.closed) req.close(NGHTTP2_CANCEL);
          reject(err);
        } else resolve(answer!);
      };
      const timer = setTimeout(
        () => finish(failure.timeout(r)),
        Math.max(0, deadline - this.now()),
      );
      const refused = () => req.rstCode === NGHTTP2_REFUSED_STREAM;
      /** A stream that broke: before any answer byte on a session that broke, a stale one. */
      const broken = (err: Error) =>
        refused()
          ? new RefusedStream('the server refused the stream')
          : new TransportError(
              !answered && session.destroyed ? 'stale_connection' : 'network',
              err.message,
              { cause: err },
            );
      req.on('response', (h) => {
        answered = true;
        status = Number(h[':status']);
        const { ':status': _status, ...rest } = h;
        headers = rest as IncomingHttpHeaders;
      });
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > r.maxBodyBytes) {
          finish(failure.bodyTooLarge(r));
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () =>
        finish(undefined, { status, headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      // 'close' follows every stream's end: an error is made only when the call is still open.
      req.on('close', () => {
        if (!settled) {
          finish(
            broken(new Error(`the stream closed before its end (HTTP/2 code ${req.rstCode})`)),
          );
        }
      });
      req.on('error', (err: Error) => {
        if (!settled) finish(broken(err));
      });
      req.end();
    });
  }
}

/** A stream the server did not process (REFUSED_STREAM, or a session already closing). */
class RefusedStream extends Error {}

const usable = (session: http2.ClientHttp2Session) =>
  !session.closed && !session.destroyed && session.socket !== null;

/** `promise`, or a TransportError of `kind` once `ms` have passed. */
function withDeadline<T>(
  promise: Promise<T>,
  ms: number,
  kind: 'connect_timeout' | 'timeout',
): Promise<T> {
  const error = () => new TransportError(kind, `no connection within ${Math.max(0, ms)} ms`);
  if (ms <= 0) return Promise.reject(error());
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(error()), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
