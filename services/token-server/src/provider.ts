import { createPrivateKey, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import type { ClientsConfig, TokenServerConfig } from './token-server-config';

/** The few members of oidc-provider's Provider this server uses (it ships no types). */
export interface OidcProvider {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => void;
  on(
    event: 'grant.success',
    listener: (ctx: { oidc: { client?: { clientId: string } }; body?: unknown }) => void,
  ): void;
  on(event: 'grant.error' | 'server_error', listener: (ctx: unknown, err: Error) => void): void;
}

/** oidc-provider's storage contract, in memory (tokens here are JWTs: little is stored). */
class MemoryAdapter {
  private static store = new Map<string, unknown>();
  constructor(private readonly model: string) {}
  private key(id: string) {
    return `${this.model}:${id}`;
  }
  async upsert(id: string, payload: unknown, expiresIn?: number) {
    MemoryAdapter.store.set(this.key(id), payload);
    if (expiresIn)
      setTimeout(() => MemoryAdapter.store.delete(this.key(id)), expiresIn * 1000).unref();
  }
  async find(id: string) {
    return MemoryAdapter.store.get(this.key(id));
  }
  async findByUserCode() {
    return undefined;
  }
  async findByUid() {
    return undefined;
  }
  async consume() {}
  async destroy(id: string) {
    MemoryAdapter.store.delete(this.key(id));
  }
  async revokeByGrantId() {}
}

/**
 * An oidc-provider 8 instance that speaks what the chain's client expects: the client
 * credentials grant at `/oauth2/token`, clients authenticated by secret (Basic), RS256 JWT
 * access tokens signed with the configured key and kid, carrying `client_id` and `scope`.
 * oidc-provider is ESM-only, so it is loaded with a dynamic import from this CommonJS module.
 */
export async function createProvider(
  server: TokenServerConfig,
  { clients }: ClientsConfig,
): Promise<OidcProvider> {
  const specifier = 'oidc-provider';
  const { default: Provider } = (await import(specifier)) as {
    default: new (issuer: string, configuration: object) => OidcProvider;
  };
  const signingJwk = {
    ...createPrivateKey(fs.readFileSync(server.signing.keyFile, 'utf8')).export({ format: 'jwk' }),
    kid: server.signing.kid,
    alg: 'RS256',
    use: 'sig',
  };
  const allScopes = [...new Set(Object.values(clients).flatMap((c) => c.scope))];
  const lifetimeOf = (clientId: string) =>
    clients[clientId]?.tokenLifetimeSeconds ?? server.tokenLifetimeSeconds;

  return new Provider(server.issuer, {
    adapter: MemoryAdapter,
    clients: Object.entries(clients).map(([clientId, c]) => ({
      client_id: clientId,
      client_secret: c.secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      ...(c.scope.length ? { scope: c.scope.join(' ') } : {}),
    })),
    jwks: { keys: [signingJwk] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: allScopes,
    routes: { token: '/oauth2/token', jwks: '/oauth2/jwks' },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => server.audience,
        useGrantedResource: () => true,
        // Every token is for "the chain": its scope is what the client may ask for.
        getResourceServerInfo: (
          _ctx: unknown,
          _resource: string,
          client: { clientId: string },
        ) => ({
          scope: (clients[client.clientId]?.scope ?? []).join(' '),
          audience: server.audience,
          accessTokenTTL: lifetimeOf(client.clientId),
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256', kid: server.signing.kid } },
        }),
      },
    },
  });
}
