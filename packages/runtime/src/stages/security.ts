import {
  applyPassThrough,
  verifiedCallerOf,
  type RequestGuard,
  type SecurityConfig,
} from '@chain/security';
import type { Stage } from '../exchange.js';

/**
 * light-4j's JWT verify handler, after routing (it needs the scopes). A 403 keeps its caller, so
 * metrics count it under the client, as light-4j does. The SWT client headers are removed.
 */
export function securityStage(
  check: NonNullable<RequestGuard['check']>,
  security: SecurityConfig,
): Stage {
  const { passThroughClaims, enableVerifySwt } = security;
  const idHeader = enableVerifySwt ? security.swtClientIdHeader.toLowerCase() : undefined;
  const secretHeader = enableVerifySwt ? security.swtClientSecretHeader.toLowerCase() : undefined;
  return async (x) => {
    applyPassThrough(x.req.headers, passThroughClaims);
    const { headers } = x.req;
    const swtClientId = idHeader ? headers[idHeader] : undefined;
    const swtClientSecret = secretHeader ? headers[secretHeader] : undefined;
    if (idHeader) delete headers[idHeader];
    if (secretHeader) delete headers[secretHeader];
    try {
      const caller = await check({
        authorization: headers.authorization,
        scopeToken: headers['x-scope-token'],
        requiredScopes: x.context.operation?.scopes,
        path: x.path,
        clientCertThumbprint: x.context.clientCertThumbprint,
        method: x.method,
        dpop: headers.dpop,
        scopeTokenDpop: headers['x-scope-token-dpop'],
        swtClientId,
        swtClientSecret,
        correlationId: x.context.trace.correlationId,
        traceId: x.context.trace.traceId,
        remoteAddress: x.req.socket?.remoteAddress,
      });
      if (!caller) return; // a path of skipPathPrefixes
      applyPassThrough(x.req.headers, passThroughClaims, caller.passThrough);
      x.context.caller = caller;
    } catch (err) {
      const caller = verifiedCallerOf(err);
      if (caller) x.context.caller = caller;
      throw err;
    }
  };
}
