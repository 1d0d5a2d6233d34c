import type { KoaContextWithOIDC } from 'oidc-provider';

/** What oidc-provider 8's discovery writes whatever is configured, about what is not run here. */
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

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** oidc-provider 8's answer to a route it does not serve (9 sends no body): kept for every one. */
export const unknownRoute = (method: string, path: string) => ({
  error: 'invalid_request',
  error_description: `unrecognized route or not allowed method (${method} on ${path})`,
});

/**
 * oidc-provider middleware: the metadata (RFC 8414) at both well-known paths, one document, and
 * what is not served answered as an unknown route.
 */
export function metadataMiddleware(scopes: string[], responseModes: readonly string[]) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    if (ctx.path === '/.well-known/oauth-authorization-server' && READS.has(ctx.method)) {
      ctx.path = '/.well-known/openid-configuration'; // the discovery route
    }
    await next();
    if (ctx.oidc?.route === 'discovery' && ctx.status === 200) {
      const metadata: Record<string, unknown> = {
        ...(ctx.body as object),
        scopes_supported: scopes,
        response_modes_supported: [...responseModes],
      };
      for (const member of NOT_SERVED) delete metadata[member];
      ctx.body = metadata;
    }
    if (ctx.status === 404 && ctx.body === undefined) {
      ctx.body = unknownRoute(ctx.method, ctx.path);
      ctx.status = 404; // koa makes it 200 when a body is set
    }
  };
}
