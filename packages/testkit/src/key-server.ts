import crypto from 'node:crypto';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { keyServiceAnswer, type ClientCheck } from '@chain/oauth-client';

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
  /** light-oauth2's `providerId` (federation); none by default. */
  providerId?: string;
  port?: number;
}

/** `serve` answers; `hang` accepts and never answers; `fail` answers 500. */
export type KeyServerMode = 'serve' | 'hang' | 'fail';

/**
 * A small HTTPS key distribution server answering exactly as light-oauth2's key service does
 * (`keyServiceAnswer` of @chain/oauth-client): `GET {uri}/{kid}` with Basic auth answers the PEM
 * certificate (`application/text`); an unknown kid of its own 400 ERR12030 INVALID_KEY_ID, a kid
 * of an unknown federated provider (four characters or more) 404 ERR12017; no or wrong
 * credentials 401 ERR12002 / ERR12007, an unknown client 404 ERR12014. `GET {uri}` answers a
 * JWKS. It counts every request and can be stopped and started again on the same port.
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
      let kid = path.slice(this.uri.length + 1);
      try {
        kid = decodeURIComponent(kid);
      } catch {
        // kept as sent
      }
      const answer = keyServiceAnswer(kid, req.headers.authorization, {
        providerId: this.options.providerId,
        authenticate: (header) => this.authenticate(header),
        certificate: (keyId) => this.keys.get(keyId),
      });
      send(res, answer.status, answer.contentType, answer.body);
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

  private authenticate(header: string | undefined): ClientCheck {
    if (header === undefined) return { ok: false, reason: 'missing' };
    // light-oauth2: anything but `Basic id:secret` is an unauthorized client.
    const match = /^basic (.+)$/i.exec(header);
    const decoded = match ? Buffer.from(match[1], 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    if (colon < 0) return { ok: false, reason: 'wrong-secret' };
    const clientId = decoded.slice(0, colon);
    if (clientId !== this.options.clientId)
      return { ok: false, reason: 'unknown-client', clientId };
    if (decoded.slice(colon + 1) !== this.options.clientSecret) {
      return { ok: false, reason: 'wrong-secret' };
    }
    return { ok: true };
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
