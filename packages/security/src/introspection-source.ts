/**
 * An introspection server's answer about a token (RFC 7662 section 2.2): active with its
 * members (`client_id`, `scope`, `exp`, `sub`, `cnf`, ...), or not active.
 */
export type Introspected = { active: true; claims: Record<string, unknown> } | { active: false };

/**
 * The client that asks, when a request brings its own (security.yml `swtClientIdHeader` /
 * `swtClientSecretHeader`, light-4j's): it replaces the configured one for that request.
 */
export interface IntrospectionClient {
  clientId: string;
  clientSecret: string;
}

/**
 * Where opaque tokens are introspected (client.yml's introspection server; `@chain/oauth-client`
 * implements it over the service's HTTP client). Resolves the server's answer. Rejects when there
 * is none: unreachable, a time-out, an error answer, a body that is not an RFC 7662 answer
 * (503 ERR10079); with `RefusedIntrospectionClient` when the server refused the request's own
 * `client` (401 ERR10080).
 */
export interface IntrospectionSource {
  introspect(token: string, client?: IntrospectionClient): Promise<Introspected>;
}

/**
 * The introspection server refused the client credentials a request brought (its 401
 * `invalid_client`): the caller's mistake, not the server's failure. The message names the
 * server and its error code, nothing of the credentials.
 */
export class RefusedIntrospectionClient extends Error {
  override readonly name = 'RefusedIntrospectionClient';
}
