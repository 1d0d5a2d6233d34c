import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import type http2 from 'node:http2';
import type tls from 'node:tls';
import type { Logger } from 'pino';
import type { ServerConfig } from './server-config';

/**
 * server.yml `enableTwoWayTls`: the HTTPS port asks every client for a certificate and completes
 * the handshake only with one that chains to `truststoreName` (Node's `requestCert` and
 * `rejectUnauthorized`: OpenSSL verifies the chain, the validity dates and the client-auth
 * purpose). A client without one, or with another, gets a TLS alert and never an answer.
 *
 * The verified certificate's RFC 8705 thumbprint (`x5t#S256`: base64url of the SHA-256 of its
 * DER bytes) is computed once per connection, when the handshake completes, and kept on the
 * connection: the socket for HTTP/1.1, the session for HTTP/2. Each request reads it into its
 * context (`clientCertThumbprint`), so that a later stage can compare it with a token's
 * `cnf["x5t#S256"]`.
 */

/** Where a connection keeps its client certificate's thumbprint. */
const THUMBPRINT = Symbol('clientCertThumbprint');

type Holder = { [THUMBPRINT]?: string };

/** The TLS options of client authentication, or undefined when server.yml does not ask for it. */
export function clientAuthOptions(config: ServerConfig): tls.TlsOptions | undefined {
  if (!config.enableTwoWayTls || !config.truststoreName) return undefined;
  return {
    requestCert: true,
    rejectUnauthorized: true,
    ca: fs.readFileSync(config.truststoreName),
  };
}

/** RFC 8705's `x5t#S256` of a certificate: base64url (no padding) of SHA-256 over its DER bytes. */
export function certificateThumbprint(der: Buffer): string {
  return createHash('sha256').update(der).digest('base64url');
}

/** The thumbprint of a verified client certificate on a socket (or an HTTP/2 session's proxy). */
function verifiedThumbprint(socket: tls.TLSSocket): string | undefined {
  if (!socket.authorized) return undefined;
  const cert = socket.getPeerX509Certificate();
  return cert ? certificateThumbprint(cert.raw) : undefined;
}

/**
 * The thumbprint of the client certificate the request's connection presented and the trust
 * store verified; undefined without two-way TLS.
 */
export function clientCertThumbprint(req: http.IncomingMessage): string | undefined {
  // An HTTP/2 request's `socket` is a proxy made per stream; its session is made once.
  const stream = (req as unknown as { stream?: http2.ServerHttp2Stream }).stream;
  const holder = (stream ? stream.session : req.socket) as Holder | undefined;
  return holder?.[THUMBPRINT];
}

/**
 * Keeps the thumbprint on each connection of a server that asks for client certificates, and
 * logs each handshake it refuses (the reason and the address, nothing of the certificate).
 */
export function watchClientCertificates(
  server: tls.Server | http2.Http2SecureServer,
  logger: Logger,
): void {
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    // An HTTP/2 connection's session is made before this listener runs: see 'session' below.
    if (socket.alpnProtocol !== 'h2') {
      (socket as tls.TLSSocket & Holder)[THUMBPRINT] = verifiedThumbprint(socket);
    }
  });
  server.on('session', (session: http2.ServerHttp2Session) => {
    (session as http2.ServerHttp2Session & Holder)[THUMBPRINT] = verifiedThumbprint(
      session.socket as tls.TLSSocket,
    );
  });
  server.on('tlsClientError', (err: Error & { code?: string }, socket: tls.TLSSocket) => {
    if (err.code === 'ECONNRESET') return;
    logger.info(
      { reason: err.code ?? err.message, remoteAddress: socket.remoteAddress },
      'TLS handshake refused',
    );
  });
}
