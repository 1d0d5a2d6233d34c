import type { Logger } from '@chain/runtime';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { TokenStats } from './token-stats.js';

/**
 * oidc-provider middleware: counts and logs (README), never the token. Every active answer names
 * its `token_type`: oidc-provider leaves it out for a refresh token (the only kind it introspects
 * without one), so a resource server could not tell it from an access token.
 */
export function introspectionAudit(stats: TokenStats, logger: Logger) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    await next();
    const clientId = ctx.oidc?.client?.clientId ?? 'unknown';
    if (ctx.oidc?.route === 'revocation') {
      logger.info({ clientId, status: ctx.status }, 'token revocation');
    }
    if (ctx.oidc?.route !== 'introspection') return;
    const answer = (ctx.body ?? {}) as { active?: unknown; token_type?: unknown; error?: unknown };
    if (answer.active === true && answer.token_type === undefined) {
      answer.token_type = 'refresh_token';
    }
    // oidc-provider 9 answers 400 unsupported_token_type for a JWT; RFC 7662 section 2.2 says a
    // token the server does not vouch for is {"active":false}.
    if (answer.error === 'unsupported_token_type') {
      ctx.status = 200;
      ctx.body = { active: false };
    }
    stats.count('introspectionRequests', clientId);
    const body = (ctx.body ?? {}) as { active?: unknown; client_id?: unknown };
    const active = body.active === true;
    const tokenClientId = typeof body.client_id === 'string' ? body.client_id : undefined;
    logger.info({ clientId, status: ctx.status, active, tokenClientId }, 'token introspected');
  };
}
