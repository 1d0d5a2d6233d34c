import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { StatusError } from '@chain/errors';
import { watchClientCertificates } from './client-certificate.js';
import { readTrace } from './correlation.js';
import { ERROR_TYPE, sendError } from './respond.js';
import type { ServerConfig } from './server-config.js';
import { echoPath } from './stages/routing.js';

const LINGER_MS = 1000;

/** After `stop()`: 503 ERR20006 for new requests, each connection closed once idle. */
export class ShutdownGate {
  private stopping = false;
  /**
   * The open HTTP/1.1 connections, whose response in progress gets `Connection: close` at stop:
   * an entry a connection, not a request. A set of the responses in flight, added to and deleted
   * from at every request, made V8 promote about 2.4 KB a request into the old generation (api-d
   * loaded alone peaked at 168-172 MB resident with it, 120 without; docs/benchmarks.md).
   */
  private readonly connections = new Set<Duplex>();
  private readonly servers: (http.Server | http2.Http2SecureServer)[] = [];
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  /** One `close` listener for all responses (a closure per request costs more). */
  private readonly closed = () => {
    if (this.stopping) this.closeIdle();
  };

  private closeIdle(): void {
    for (const server of this.servers) (server as http.Server).closeIdleConnections();
  }

  watch(server: http.Server | http2.Http2SecureServer): void {
    this.servers.push(server);
    // A TLS server's HTTP/1.1 parser reads the TLS socket, not the TCP one `connection` gives.
    server.on(
      server instanceof tls.Server ? 'secureConnection' : 'connection',
      (socket: Duplex) => {
        this.connections.add(socket);
        socket.once('close', () => this.connections.delete(socket));
      },
    );
    server.on('session', (session: http2.ServerHttp2Session) => {
      if (this.stopping) return session.close();
      this.sessions.add(session);
      session.once('close', () => this.sessions.delete(session));
    });
  }

  closeAll(): void {
    for (const session of this.sessions) session.destroy();
    for (const server of this.servers) {
      // An HTTP/2 server with HTTP/1.1 fallback lacks closeAllConnections but has the state.
      http.Server.prototype.closeAllConnections.call(server as http.Server);
    }
  }

  admit(res: http.ServerResponse): boolean {
    if (this.stopping) {
      sendError(
        res,
        new StatusError('ERR20006', [], { headers: { Connection: 'close', 'Retry-After': '1' } }),
      );
      return false;
    }
    // `close` comes once per response: `on` spares the wrapper `once` makes per request.
    res.on('close', this.closed);
    return true;
  }

  stop(): void {
    this.stopping = true;
    for (const socket of this.connections) {
      // Node's own field, as its clientError handler reads it: the response being written.
      const res = (socket as Duplex & { _httpMessage?: http.ServerResponse | null })._httpMessage;
      if (res && !res.headersSent) res.setHeader('Connection', 'close');
    }
    this.closeIdle();
    for (const session of this.sessions) session.close();
  }
}

export interface ServedApp {
  listener: http.RequestListener;
  gate: ShutdownGate;
  http2?: boolean;
}

/** The HTTP edges of every service: a catalogue answer where Node would answer bare or not. */
export function createHttpServer(
  protocol: 'https' | 'http',
  config: ServerConfig,
  app: ServedApp,
  logger: Logger,
  tls?: https.ServerOptions,
): http.Server | http2.Http2SecureServer {
  const options: http.ServerOptions = {
    maxHeaderSize: config.maxHeaderSize,
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // Node's default, 30 s, would let a 1 s time-out fire up to 30 s late.
    connectionsCheckingInterval: Math.min(1000, Math.ceil(config.headersTimeoutMs / 2)),
    // Checked below, with a catalogue body (Node answers a bare 400).
    requireHostHeader: false,
  };
  const listener: http.RequestListener = (req, res) => {
    if (!app.gate.admit(res)) return;
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      return sendError(
        res,
        new StatusError('ERR20007', ['An HTTP/1.1 request needs a Host header'], {
          headers: { Connection: 'close' },
        }),
      );
    }
    app.listener(req, res);
  };
  let server: http.Server | http2.Http2SecureServer;
  if (protocol === 'https' && config.enableHttp2 && app.http2) {
    server = http2.createSecureServer(
      {
        ...(tls as http2.SecureServerOptions),
        allowHTTP1: true,
        settings: { maxHeaderListSize: config.maxHeaderSize },
      },
      listener as unknown as Parameters<typeof http2.createSecureServer>[1],
    );
    // Node runs its HTTP/1.1 server code for the fallback connections, which reads these.
    Object.assign(server, options);
    server.on('session', (session: http2.ServerHttp2Session) => {
      session.setTimeout(config.keepAliveTimeoutMs, () => session.close());
    });
  } else {
    server =
      protocol === 'https'
        ? https.createServer({ ...options, ...tls }, listener)
        : http.createServer(options, listener);
  }
  app.gate.watch(server);
  if (tls?.requestCert) watchClientCertificates(server as https.Server, logger);
  server.on('clientError', clientErrorHandler(config, logger));
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
    res.setHeader('X-Correlation-Id', readTrace(req.headers).correlationId);
    sendError(res, new StatusError('ERR20010'));
  });
  return server;
}

const PROBE_PATHS = new Set(['/health', '/ready']);

/** server.yml `probePort`: `/health` and `/ready` only, HTTP/1.1 only. */
export function probesOnly(app: ServedApp): ServedApp {
  return {
    gate: app.gate,
    http2: false,
    listener: (req, res) => {
      const path = (req.url ?? '/').split('?', 1)[0];
      if (PROBE_PATHS.has(path)) return app.listener(req, res);
      res.setHeader('X-Correlation-Id', readTrace(req.headers).correlationId);
      sendError(res, new StatusError('ERR20001', [`Path ${echoPath(path)} on the probe port`]));
    },
  };
}

function clientErrorOf(code: string | undefined, config: ServerConfig): StatusError {
  const tooLarge = [String(config.maxHeaderSize)];
  if (code === 'HPE_HEADER_OVERFLOW') return new StatusError('ERR20008', tooLarge);
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new StatusError('ERR20009');
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return new StatusError('ERR10068');
  return new StatusError('ERR20007', ['The request line or a header cannot be parsed']);
}

function clientErrorHandler(config: ServerConfig, logger: Logger) {
  const answeredSockets = new WeakSet<Duplex>();
  return (err: Error & { code?: string }, socket: Duplex) => {
    // Node reports every later parse error of the same connection too: answer once.
    if (answeredSockets.has(socket)) return;
    answeredSockets.add(socket);
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // As Node's own handler: a response already on its way (pipelining) must not be corrupted.
    const inFlight = (socket as Duplex & { _httpMessage?: http.ServerResponse })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const error = clientErrorOf(err.code, config);
    logger.info(
      {
        code: error.code,
        reason: err.code ?? err.message,
        remoteAddress: (socket as Duplex & { remoteAddress?: string }).remoteAddress,
      },
      'request refused before it was read',
    );
    const body = JSON.stringify(error.body);
    socket.end(
      `HTTP/1.1 ${error.statusCode} ${http.STATUS_CODES[error.statusCode]}\r\n` +
        `Content-Type: ${ERROR_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
    // Half-closed and read for a moment, so that the client sees the answer, not a reset.
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
