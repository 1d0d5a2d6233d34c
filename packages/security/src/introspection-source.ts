export type Introspected = { active: true; claims: Record<string, unknown> } | { active: false };

export interface IntrospectionClient {
  clientId: string;
  clientSecret: string;
}

/** Rejects when there is no answer (ERR10079), with RefusedIntrospectionClient for ERR10080. */
export interface IntrospectionSource {
  introspect(token: string, client?: IntrospectionClient): Promise<Introspected>;
}

/** The server refused the request's own client (401 `invalid_client`); no credential in the message. */
export class RefusedIntrospectionClient extends Error {
  override readonly name = 'RefusedIntrospectionClient';
}
