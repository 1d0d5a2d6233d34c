import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { StatusError } from '@chain/security';
import { readTrace } from './correlation';
import { ERROR_TYPE, sendError } from './respond';
import type { ServerConfig } from './server-config';

/** How long a connection refused at the HTTP level may still send before it is cut. */
const LINGER_MS = 1000;

/**
 * The stopping state of a service's servers. Until `stop()` every request is let through and
 * followed to its end; after it, a new request is answered 503 ERR20006 with `Connection: close`,
 * an in-flight one finishes with `Connection: close` (when its headers are not sent yet), and
 * each connection is closed as soon as it has nothing in flight.
 */
export class ShutdownGate {
  private stopping = false;
  private readonly inFlight = new Set<http.ServerResponse>();
  private readonly servers: http.Server[] = [];

  get isStopping(): boolean {
    return this.stopping;
  }

  /** A server whose idle connections are closed while stopping. */
  watch(server: http.Server): void {
    this.servers.push(server);
  }

  /** Whether the request may go on; answers it 503 when not. */
  admit(res: http.ServerResponse): boolean {
    if (this.stopping) {
      sendError(
        res,
        new StatusError('ERR20006', [], { headers: { Connection: 'close', 'Retry-After': '1' } }),
      );
      return false;
    }
    this.inFlight.add(res);
    res.once('close', () => {
      this.inFlight.delete(res);
      if (this.stopping) for (const server of this.servers) server.closeIdleConnections();
    });
    return true;
  }

  stop(): void {
    this.stopping = true;
    for (const res of this.inFlight) {
      if (!res.headersSent) res.setHeader('Connection', 'close');
    }
    for (const server of this.servers) server.closeIdleConnections();
  }
}

/** The part of a service the servers need: its listener and its shutdown gate. */
export interface ServedApp {
  listener: http.RequestListener;
  gate: ShutdownGate;
}

/**
 * The HTTP edges of every service, the same for both hosts, as a careful server has them
 * (fastify is the reference): Node's options from server.yml (header size, time-outs), a
 * catalogue answer where Node would answer bare text or nothing, and the stopping gate.
 *
 * - a malformed request line or header: 400 ERR20007; a header block over `maxHeaderSize`:
 *   431 ERR20008; a request not received within `headersTimeoutMs` / `requestTimeoutMs`: 408
 *   ERR20009; the answer is written, the connection half-closed, and the client's remaining
 *   bytes read for a moment so that it sees the answer rather than a reset;
 * - an HTTP/1.1 request without `Host`: 400 ERR20007; an `Expect` other than 100-continue: 417
 *   ERR20010;
 * - while stopping: 503 ERR20006 with `Connection: close`.
 */
export function createHttpServer(
  protocol: 'https' | 'http',
  config: ServerConfig,
  app: ServedApp,
  logger: Logger,
  tls?: https.ServerOptions,
): http.Server {
  const options: http.ServerOptions = {
    maxHeaderSize: config.maxHeaderSize,
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // How often Node checks the two time-outs above (its default, 30 s, would let a 1 s
    // time-out fire up to 30 s late).
    connectionsCheckingInterval: Math.min(1000, Math.ceil(config.headersTimeoutMs / 2)),
    // Checked by `gate` below, which answers a catalogue body (Node answers a bare 400).
    requireHostHeader: false,
  };
  const listener = admit(app);
  const server =
    protocol === 'https'
      ? https.createServer({ ...options, ...tls }, listener)
      : http.createServer(options, listener);
  app.gate.watch(server);
  server.on('clientError', clientErrorHandler(config, logger));
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
    res.setHeader('X-Correlation-Id', readTrace(req.headers).correlationId);
    sendError(res, new StatusError('ERR20010'));
  });
  return server;
}

/** What every request meets before the service's stages. */
function admit(app: ServedApp): http.RequestListener {
  return (req, res) => {
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
}

/** What Node reports for a request it could not read, as a catalogue error. */
function clientErrorOf(code: string | undefined, config: ServerConfig): StatusError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new StatusError('ERR20008', [String(config.maxHeaderSize)]);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new StatusError('ERR20009');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new StatusError('ERR10068');
    default:
      return new StatusError('ERR20007', ['The request line or a header cannot be parsed']);
  }
}

/** A whole HTTP/1.1 answer as bytes, for a socket no response object owns. */
function rawAnswer(error: StatusError): string {
  const body = JSON.stringify(error.body);
  return (
    `HTTP/1.1 ${error.statusCode} ${http.STATUS_CODES[error.statusCode]}\r\n` +
    `Content-Type: ${ERROR_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `Connection: close\r\n\r\n${body}`
  );
}

function clientErrorHandler(config: ServerConfig, logger: Logger) {
  const answeredSockets = new WeakSet<Duplex>();
  return (err: Error & { code?: string }, socket: Duplex) => {
    // Node reports every later parse error of the same connection too: answer once.
    if (answeredSockets.has(socket)) return;
    answeredSockets.add(socket);
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // Node's own handler checks the same: a response already on its way must not be corrupted
    // by a second one (pipelined requests).
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
    // Half-close after the answer and keep reading what the client still sends, so that its
    // TCP stack delivers the answer instead of a reset; cut the connection after a moment.
    socket.end(rawAnswer(error));
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
