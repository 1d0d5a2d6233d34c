import type { Verifier } from '@chain/security';
import type { Stage } from '../exchange.js';

/**
 * light-4j's JWT verify handler, after routing (it needs the scopes), on @chain/security's
 * verifier. A 403 keeps its caller, so metrics count it under the client, as light-4j does.
 */
export function securityStage(verifier: Verifier): Stage {
  return async (x) => {
    const verdict = await verifier.verify({
      method: x.method,
      path: x.path,
      headers: x.req.headers,
      requiredScopes: x.context.operation?.scopes,
      clientCertThumbprint: x.context.clientCertThumbprint,
      correlationId: x.context.trace.correlationId,
      traceId: x.context.trace.traceId,
      remoteAddress: x.req.socket?.remoteAddress,
    });
    if (verdict.auth) x.context.caller = verdict.auth;
    if (!verdict.ok) throw verdict.refusal.error;
  };
}
