import crypto from 'node:crypto';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

export interface KeyServerOptions {
  /** TLS key and certificate (PEM) of the HTTPS listener. */
  tls: { key: string | Buffer; cert: string | Buffer };
  /** Basic credentials the key route requires. */
  clientId: string;
  clientSecret: string;
  /** light-oauth2's key path (default `/oauth2/key`). */
  uri?: string;
  /** kid -> PEM certificate served at `{uri}/{kid}` and, as JWK, in the JWKS at `{uri}`. */
  keys?: Record<string, string>;
  port?: number;
}

/** `serve` answers; `hang` accepts and never answers; `fail` answers 500. */
export type KeyServerMode = 'serve' | 'hang' | 'fail';

/**
 * A small HTTPS key distribution server speaking light-oauth2's key protocol:
 * `GET {uri}/{kid}` with Basic auth answers the PEM certificate (`application/text`), 404 for an
 * unknown kid, 401 for wrong credentials; `GET {uri}` answers a JWKS. It counts every request
 * and can be stopped and started again on the same port (outage tests).
 */
export class KeyServer {
  readonly keys = new Map<string, string>();
  /** Every request path, in order. */
  readonly requests: string[] = [];
  mode: KeyServerMode = 'serve';
  private server?: https.Server;
  private readonly sockets = new Set<Socket>();
  private boundPort: number;
  private readonly uri: string;

  constructor(private readonly options: KeyServerOptions) {
    this.uri = options.uri ?? '/oauth2/key';
    this.boundPort = options.port ?? 0;
    for (const [kid, pem] of Object.entries(options.keys ?? {})) this.keys.set(kid, pem);
  }

  get port(): number {
    return this.boundPort;
  }

  /** `https://localhost:<port>` */
  get url(): string {
    return `https://localhost:${this.boundPort}`;
  }

  get count(): number {
    return this.requests.length;
  }

  async start(): Promise<this> {
    const server = https.createServer(this.options.tls, (req, res) => {
      this.requests.push(req.url ?? '');
      if (this.mode === 'hang') return;
      if (this.mode === 'fail') return send(res, 500, 'application/json', '{"error":"down"}');
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'GET') return send(res, 405, 'application/json', '{}');
      if (path === this.uri) return send(res, 200, 'application/json', JSON.stringify(this.jwks()));
      if (!path.startsWith(this.uri + '/')) return send(res, 404, 'application/json', '{}');
      if (!this.authorized(req.headers.authorization)) {
        return send(res, 401, 'application/json', '{"code":"ERR12002","message":"UNAUTHORIZED"}');
      }
      const kid = decodeURIComponent(path.slice(this.uri.length + 1));
      const pem = this.keys.get(kid);
      if (!pem)
        return send(res, 404, 'application/json', '{"code":"ERR12017","message":"KEY_NOT_FOUND"}');
      send(res, 200, 'application/text', pem);
    });
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.boundPort, '127.0.0.1', () => resolve());
    });
    this.boundPort = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Closes the listener and every open connection (the port stays reserved for start()). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The JWKS of the keys held: RSA public keys with kid, `alg: RS256`, `use: sig`. */
  jwks(): { keys: Record<string, unknown>[] } {
    return {
      keys: [...this.keys].map(([kid, pem]) => ({
        ...new crypto.X509Certificate(pem).publicKey.export({ format: 'jwk' }),
        kid,
        alg: 'RS256',
        use: 'sig',
      })),
    };
  }

  private authorized(header: string | undefined): boolean {
    const expected =
      'Basic ' +
      Buffer.from(`${this.options.clientId}:${this.options.clientSecret}`).toString('base64');
    return header === expected;
  }
}

function send(res: import('node:http').ServerResponse, status: number, type: string, body: string) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Creates and starts a key server. */
export function startKeyServer(options: KeyServerOptions): Promise<KeyServer> {
  return new KeyServer(options).start();
}
