/** OpenID Connect Discovery's path (oidc-provider's discovery route). */
export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
/** RFC 8414's path for an issuer without a path component. */
export const OAUTH_METADATA_PATH = '/.well-known/oauth-authorization-server';

/**
 * Members that oidc-provider 8's discovery writes whatever is configured, each about something
 * this server does not run: oidc-provider's own interactive authorization endpoint (the `iss`
 * authorization response parameter, request objects, the claims parameter, ACR values) and ID
 * tokens (their claims, subject types and signing algorithms; no client may be granted `openid`,
 * so no ID token is ever issued).
 */
const NOT_SERVED = [
  'acr_values_supported',
  'authorization_response_iss_parameter_supported',
  'claim_types_supported',
  'claims_parameter_supported',
  'claims_supported',
  'id_token_signing_alg_values_supported',
  'request_parameter_supported',
  'request_uri_parameter_supported',
  'subject_types_supported',
];

/** What the metadata takes from this server rather than from oidc-provider's configuration. */
export interface MetadataFacts {
  /** The scopes a client may be granted (clients.yml). */
  scopes: string[];
  /** The response modes of the authorization endpoint (the code endpoint's). */
  responseModes: readonly string[];
}

/**
 * The authorization server metadata (RFC 8414): oidc-provider's discovery document, which it
 * derives from what is enabled (endpoints, grant types, client authentication methods, PKCE
 * methods, and any feature turned on later: mTLS, DPoP, introspection), with what it writes
 * regardless taken out (NOT_SERVED), and the scopes and response modes this server has.
 */
export function serverMetadata(
  discovered: Record<string, unknown>,
  facts: MetadataFacts,
): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    ...discovered,
    scopes_supported: facts.scopes,
    response_modes_supported: [...facts.responseModes],
  };
  for (const member of NOT_SERVED) delete metadata[member];
  return metadata;
}

/** The methods the discovery route answers (GET and HEAD, and OPTIONS for CORS). */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The few members of oidc-provider's (Koa) request context the middleware uses. */
export interface ProviderContext {
  method: string;
  path: string;
  status: number;
  body: unknown;
  oidc?: { route?: string };
}

/**
 * oidc-provider middleware: serves the metadata at both well-known paths (RFC 8414's is
 * answered by the discovery route, so the two documents are one), as `serverMetadata` makes it.
 */
export function metadataMiddleware(facts: MetadataFacts) {
  return async (ctx: ProviderContext, next: () => Promise<void>): Promise<void> => {
    if (ctx.path === OAUTH_METADATA_PATH && READS.has(ctx.method)) {
      ctx.path = OPENID_CONFIGURATION_PATH;
    }
    await next();
    if (ctx.oidc?.route === 'discovery' && ctx.status === 200) {
      ctx.body = serverMetadata(ctx.body as Record<string, unknown>, facts);
    }
  };
}
