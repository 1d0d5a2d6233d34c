import { verifiedCallerOf, type RequestGuard } from '@chain/security';
import type { Stage } from '../exchange';

/**
 * light-4j's JWT verify handler, after routing (it needs the operation's scopes): the security
 * package checks the request's credentials; the verified caller goes into the context. A 403
 * keeps its (verified) caller, so metrics count it under the client, as light-4j does.
 */
export function securityStage(check: NonNullable<RequestGuard['check']>): Stage {
  return async (x) => {
    try {
      x.context.caller = await check({
        authorization: x.req.headers.authorization,
        scopeToken: x.req.headers['x-scope-token'],
        requiredScopes: x.context.operation?.scopes,
        correlationId: x.context.trace.correlationId,
        remoteAddress: x.req.socket?.remoteAddress,
      });
    } catch (err) {
      const caller = verifiedCallerOf(err);
      if (caller) x.context.caller = caller;
      throw err;
    }
  };
}
