import { applyPassThrough, verifiedCallerOf, type RequestGuard } from '@chain/security';
import type { Stage } from '../exchange';

/**
 * light-4j's JWT verify handler, after routing (it needs the operation's scopes): the security
 * package checks the request's credentials, and the binding of a bound token against the
 * connection's client certificate or the request's DPoP proofs (`DPoP` for Authorization,
 * `X-Scope-Token-DPoP` for X-Scope-Token; a proof's `htu` is the scheme the request came over,
 * its Host, or `:authority` on HTTP/2, and its path); the verified caller goes into the context.
 * A 403 keeps its (verified) caller, so metrics count it under the client, as light-4j does.
 * security.yml `passThroughClaims`: the caller's own headers of those names are removed, then the
 * verified claims are set as request headers, for the handler and the downstream.
 * `swtHeaders` (security.yml `enableVerifySwt`): the headers that may bring the client to
 * introspect with (`swtClientIdHeader`, `swtClientSecretHeader`), read, then removed: the secret
 * goes no further than the introspection server.
 */
export function securityStage(
  check: NonNullable<RequestGuard['check']>,
  passThroughClaims: Readonly<Record<string, string>>,
  swtHeaders?: { clientId: string; clientSecret: string },
): Stage {
  const idHeader = swtHeaders?.clientId.toLowerCase();
  const secretHeader = swtHeaders?.clientSecret.toLowerCase();
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
        // What a bound token's binding is proven against (RFC 8705, RFC 9449).
        clientCertThumbprint: x.context.clientCertThumbprint,
        method: x.method,
        host: headers.host ?? (headers[':authority'] as string | undefined),
        secure: (x.req.socket as { encrypted?: boolean } | null)?.encrypted === true,
        dpop: headers.dpop,
        scopeTokenDpop: headers['x-scope-token-dpop'],
        // The introspection client an opaque token may bring (light-4j's SWT headers).
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

/**
 * With verification off there are no verified claims, but a caller's own headers named in
 * `passThroughClaims` are still removed (a caller must not claim `X-User-Id: admin`).
 */
export function passThroughStripStage(passThroughClaims: Readonly<Record<string, string>>): Stage {
  return (x) => applyPassThrough(x.req.headers, passThroughClaims);
}
