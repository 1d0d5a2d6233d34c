import type { Logger } from '@chain/runtime';
import type { ProviderContext } from './metadata';
import type { TokenStats } from './token-stats';

/**
 * Introspection (RFC 7662) and revocation (RFC 7009), oidc-provider's own endpoints, at paths
 * beside light-oauth2's token path. light-4j's SWT verifier posts to a path of its client.yml
 * (its tests use `/oauth2/introspection`).
 */
export const INTROSPECTION_ROUTES = {
  introspection: '/oauth2/introspection',
  revocation: '/oauth2/revocation',
} as const;

/** The client oidc-provider authenticated at an endpoint (its `clientAuthMethod`). */
interface AuthenticatedClient {
  clientAuthMethod: string;
}

/**
 * oidc-provider's `features.introspection` and `features.revocation`. Both authenticate the
 * client as the token endpoint does (its registered method: a Basic secret here). Who may
 * introspect: any client of clients.yml that authenticated with a secret; the services of the
 * chain are such clients, and a resource server asks about tokens issued to others. (A public
 * client, `none`, could only ask about its own tokens: oidc-provider's default rule, kept.)
 * Revocation: a client revokes only its own tokens (oidc-provider's rule).
 */
export function introspectionFeatures() {
  return {
    introspection: {
      enabled: true,
      allowedPolicy: (_ctx: unknown, client: AuthenticatedClient) =>
        client.clientAuthMethod !== 'none',
    },
    revocation: { enabled: true },
  };
}

/** What oidc-provider's context holds after an introspection or revocation. */
interface EndpointContext extends ProviderContext {
  oidc?: ProviderContext['oidc'] & { client?: { clientId: string } };
}

/**
 * oidc-provider middleware: counts each introspection by the client it named (`GET /stats`
 * `introspectionRequests`: refused ones too, as token requests; `unknown` when it named none)
 * and logs one line per introspection
 * (`token introspected`: the asking client, whether the token is active and whose it is) and per
 * revocation (`token revocation`: the client and the status). Never the token.
 */
export function introspectionAudit(stats: TokenStats, logger: Logger) {
  return async (ctx: EndpointContext, next: () => Promise<void>): Promise<void> => {
    await next();
    const route = ctx.oidc?.route;
    if (route !== 'introspection' && route !== 'revocation') return;
    const clientId = ctx.oidc?.client?.clientId ?? 'unknown';
    if (route === 'revocation') {
      logger.info({ clientId, status: ctx.status }, 'token revocation');
      return;
    }
    stats.introspection(clientId);
    const body = (ctx.body ?? {}) as { active?: unknown; client_id?: unknown };
    const active = body.active === true;
    const tokenClientId = typeof body.client_id === 'string' ? body.client_id : undefined;
    logger.info({ clientId, status: ctx.status, active, tokenClientId }, 'token introspected');
  };
}
