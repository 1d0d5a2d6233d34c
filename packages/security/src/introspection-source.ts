/** An introspection answer (RFC 7662 section 2.2): active with its members, or not active. */
export type Introspected = { active: true; claims: Record<string, unknown> } | { active: false };

/** The client a request brings (`swtClientIdHeader` / `swtClientSecretHeader`) to ask with. */
export interface IntrospectionClient {
  clientId: string;
  clientSecret: string;
}

/**
 * Where opaque tokens are introspected (`@chain/oauth-client` implements it). Rejects when there
 * is no answer (503 ERR10079), with `RefusedIntrospectionClient` when the server refused the
 * request's own `client` (401 ERR10080).
 */
export interface IntrospectionSource {
  introspect(token: string, client?: IntrospectionClient): Promise<Introspected>;
}

/**
 * The introspection server refused the client a request brought (401 `invalid_client`): the
 * caller's mistake. The message names the server and its code, nothing of the credentials.
 */
export class RefusedIntrospectionClient extends Error {
  override readonly name = 'RefusedIntrospectionClient';
}
