import type http from 'node:http';
import type http2 from 'node:http2';
import type tls from 'node:tls';
import type { Logger } from 'pino';
import { clientCertificateThumbprint } from '@chain/security';

/** The verified client certificate's RFC 8705 `x5t#S256`, kept on the connection. */
const THUMBPRINT = Symbol('clientCertThumbprint');

type Holder = { [THUMBPRINT]?: string };

export function clientCertThumbprint(req: http.IncomingMessage): string | undefined {
  // An HTTP/2 request's `socket` is a proxy made per stream; its session is made once.
  const stream = (req as unknown as { stream?: http2.ServerHttp2Stream }).stream;
  const holder = (stream ? stream.session : req.socket) as Holder | undefined;
  return holder?.[THUMBPRINT];
}

export function watchClientCertificates(
  server: tls.Server | http2.Http2SecureServer,
  logger: Logger,
): void {
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    // An HTTP/2 connection's session is made before this listener runs: see 'session' below.
    if (socket.alpnProtocol !== 'h2') {
      (socket as tls.TLSSocket & Holder)[THUMBPRINT] = clientCertificateThumbprint(socket);
    }
  });
  server.on('session', (session: http2.ServerHttp2Session) => {
    (session as http2.ServerHttp2Session & Holder)[THUMBPRINT] = clientCertificateThumbprint(
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
