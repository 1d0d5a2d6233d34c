import fs from 'node:fs';
import type { TLSSocket } from 'node:tls';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { subjectMatches } from './distinguished-name.js';
import type { ClientRegistration, TokenServerConfig } from './token-server-config.js';

const tlsSocket = (ctx: KoaContextWithOIDC) => ctx.req.socket as TLSSocket;
const peerCertificate = (ctx: KoaContextWithOIDC) => tlsSocket(ctx).getPeerX509Certificate?.();

/** oidc-provider's `features.mTLS` (RFC 8705) and `features.dPoP` (RFC 9449: no nonce asked). */
export function boundTokenFeatures({ mtls, dpop }: TokenServerConfig) {
  return {
    mTLS: {
      enabled: mtls.enabled,
      certificateBoundAccessTokens: mtls.enabled,
      tlsClientAuth: mtls.enabled,
      getCertificate: peerCertificate,
      certificateAuthorized: (ctx: KoaContextWithOIDC) => tlsSocket(ctx).authorized,
      certificateSubjectMatches: (ctx: KoaContextWithOIDC, property: string, expected: string) => {
        const cert = peerCertificate(ctx);
        return (
          property === 'tls_client_auth_subject_dn' && !!cert && subjectMatches(cert, expected)
        );
      },
    },
    dPoP: { enabled: dpop.enabled },
  };
}

export function boundTokenRegistration(c: ClientRegistration) {
  return {
    token_endpoint_auth_method: c.tokenEndpointAuthMethod,
    ...(c.tlsClientAuthSubjectDn ? { tls_client_auth_subject_dn: c.tlsClientAuthSubjectDn } : {}),
    ...(c.certificateBoundAccessTokens ? { tls_client_certificate_bound_access_tokens: true } : {}),
    ...(c.dpopBoundAccessTokens ? { dpop_bound_access_tokens: true } : {}),
  };
}

/** mTLS: the token port asks for a certificate and accepts any (`authorized` tells if it chained). */
export function tokenPortTls({ mtls }: TokenServerConfig) {
  if (!mtls.enabled) return {};
  return { requestCert: true, rejectUnauthorized: false, ca: fs.readFileSync(mtls.caFile!) };
}
