import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import {
  STALE_CODES,
  failure,
  TransportError,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport';

export interface HttpsTransportOptions {
  /** The keep-alive agent of the service's client.yml TLS settings (`createHttpsAgent`). */
  httpsAgent: https.Agent;
  /** For `http://` downstreams; one shared keep-alive agent by default. */
  httpAgent?: http.Agent;
}

/** Plain-HTTP downstreams (an `http://` host) share one keep-alive agent. */
const sharedHttpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/**
 * HTTP/1.1 over node:https (node:http for `http://`), on keep-alive agents. Tells a connect
 * time-out (no TCP connection and TLS handshake within `connectTimeoutMs`) from the time-out of
 * the whole exchange, and a kept-alive connection found reset (`stale_connection`: Node's agent
 * reuses an idle socket the server has just closed) from a new connection that fails. A fresh
 * connection (`freshConnection`) is made outside the keep-alive pool with the same TLS options.
 */
export class HttpsTransport implements Transport {
  private readonly httpsAgent: https.Agent;
  private readonly httpAgent: http.Agent;
  private freshHttpsAgent?: https.Agent;
  private freshHttpAgent?: http.Agent;

  constructor(options: HttpsTransportOptions) {
    this.httpsAgent = options.httpsAgent;
    this.httpAgent = options.httpAgent ?? sharedHttpAgent;
  }

  request(r: TransportRequest): Promise<TransportResponse> {
    const secure = r.url.protocol === 'https:';
    const agent = secure
      ? r.freshConnection
        ? (this.freshHttpsAgent ??= new https.Agent({
            ...this.httpsAgent.options,
            keepAlive: false,
          }))
        : this.httpsAgent
      : r.freshConnection
        ? (this.freshHttpAgent ??= new http.Agent({ keepAlive: false }))
        : this.httpAgent;
    return new Promise((resolve, reject) => {
      let answered = false;
      let connectTimer: NodeJS.Timeout | undefined;
      const fail = (err: TransportError) => {
        clearTimeout(timer);
        clearTimeout(connectTimer);
        reject(err);
      };
      const req = (secure ? https : http).request(
        r.url,
        { method: r.method, agent, headers: r.headers },
        (res) => {
          answered = true;
          clearTimeout(connectTimer);
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > r.maxBodyBytes) {
              fail(failure.bodyTooLarge(r));
              res.destroy();
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            clearTimeout(timer);
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            });
          });
          res.on('error', (err) => fail(classify(err, req, answered)));
        },
      );
      const timer = setTimeout(() => req.destroy(failure.timeout(r)), r.timeoutMs);
      req.on('socket', (socket: Socket) => {
        // A kept-alive socket is connected already; a new one has its connect time-out.
        if (!socket.connecting || r.connectTimeoutMs >= r.timeoutMs) return;
        connectTimer = setTimeout(() => req.destroy(failure.connectTimeout(r)), r.connectTimeoutMs);
        socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      });
      req.on('error', (err) => fail(classify(err, req, answered)));
      req.end();
    });
  }

  /** Closes the idle connections (tests, shutdown). */
  destroy(): void {
    this.freshHttpsAgent?.destroy();
    this.freshHttpAgent?.destroy();
  }
}

function classify(err: Error, req: http.ClientRequest, answered: boolean): TransportError {
  if (err instanceof TransportError) return err;
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (!answered && req.reusedSocket && STALE_CODES.has(code)) {
    return failure.staleConnection(code, err);
  }
  return new TransportError('network', err.message || code, { cause: err });
}
