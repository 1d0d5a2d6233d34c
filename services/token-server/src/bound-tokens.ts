import type { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { subjectMatches } from './distinguished-name';
import type { ClientRegistration, TokenServerConfig } from './token-server-config';

/** The part of oidc-provider's (Koa) context the mTLS functions read: the request's socket. */
interface TlsContext {
  req: { socket: TLSSocket };
}

/** The client certificate of the request's connection, when the client presented one. */
function peerCertificate(ctx: TlsContext): X509Certificate | undefined {
  const socket = ctx.req.socket;
  if (typeof socket.getPeerX509Certificate !== 'function') return undefined;
  return socket.getPeerX509Certificate();
}

/**
 * oidc-provider's `features.mTLS` and `features.dPoP` from token-server.yml: what lets the token
 * endpoint issue sender-constrained tokens.
 *
 * - mTLS (RFC 8705): the token port asks for a client certificate without requiring one (the
 *   TLS layer checks nothing: `rejectUnauthorized: false`). `tls_client_auth` then needs a
 *   certificate that chained to `mtls.caFile` in the handshake (the socket's `authorized`) and
 *   whose subject is the client's registered DN. A client registered with
 *   `certificateBoundAccessTokens` gets tokens carrying `cnf.x5t#S256` of the certificate it
 *   presented (the handshake proved it holds the key); without one its request is refused
 *   (`invalid_grant`).
 * - DPoP (RFC 9449): oidc-provider checks the proof (signature by its embedded key, `typ`,
 *   `htm`, `htu`, `iat` within 300 s, `jti` not seen before for the client) and binds the token
 *   to the key (`cnf.jkt`, `token_type: DPoP`). Algorithms: oidc-provider's default, ES256 and
 *   EdDSA. No nonce is asked for.
 */
export function boundTokenFeatures(server: TokenServerConfig): Record<string, object> {
  return {
    mTLS: {
      enabled: server.mtls.enabled,
      certificateBoundAccessTokens: server.mtls.enabled,
      tlsClientAuth: server.mtls.enabled,
      getCertificate: peerCertificate,
      certificateAuthorized: (ctx: TlsContext) => ctx.req.socket.authorized === true,
      certificateSubjectMatches: (ctx: TlsContext, property: string, expected: string) => {
        const cert = peerCertificate(ctx);
        // Only the subject DN is registered (clients.yml tlsClientAuthSubjectDn).
        return (
          property === 'tls_client_auth_subject_dn' &&
          cert !== undefined &&
          subjectMatches(cert, expected)
        );
      },
    },
    dPoP: { enabled: server.dpop.enabled },
  };
}

/** A client's registration members for its authentication method and token binding. */
export function boundTokenRegistration(c: ClientRegistration): Record<string, unknown> {
  return {
    token_endpoint_auth_method: c.tokenEndpointAuthMethod,
    ...(c.tlsClientAuthSubjectDn ? { tls_client_auth_subject_dn: c.tlsClientAuthSubjectDn } : {}),
    ...(c.certificateBoundAccessTokens ? { tls_client_certificate_bound_access_tokens: true } : {}),
    ...(c.dpopBoundAccessTokens ? { dpop_bound_access_tokens: true } : {}),
  };
}

/**
 * The HTTPS options of the token port for mTLS: ask for a client certificate, accept the
 * connection whatever it presents (a client without one, authenticated by its secret, is served
 * as before), and check the chain against the client CA so that `authorized` says whether it
 * chained to it.
 */
export function tokenPortTlsOptions(
  server: TokenServerConfig,
  read: (file: string) => Buffer,
): { requestCert?: boolean; rejectUnauthorized?: boolean; ca?: Buffer } {
  if (!server.mtls.enabled) return {};
  return { requestCert: true, rejectUnauthorized: false, ca: read(server.mtls.caFile!) };
}
