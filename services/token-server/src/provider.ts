import { createPrivateKey, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import { boundTokenFeatures, boundTokenRegistration } from './bound-tokens';
import { CODE_ENDPOINT } from './code-endpoint';
import { INTROSPECTION_ROUTES, introspectionFeatures } from './introspection';
import { metadataMiddleware, type ProviderContext } from './metadata';
import type { ClientsConfig, TokenServerConfig, UsersConfig } from './token-server-config';

interface OidcModel {
  save(): Promise<string>;
}

/** The few members of oidc-provider's Provider this server uses (it ships no types). */
export interface OidcProvider {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => void;
  on(
    event: 'grant.success',
    listener: (ctx: { oidc: { client?: { clientId: string } }; body?: unknown }) => void,
  ): void;
  on(event: 'grant.error' | 'server_error', listener: (ctx: unknown, err: Error) => void): void;
  use(middleware: (ctx: ProviderContext, next: () => Promise<void>) => Promise<void>): void;
  Client: { find(id: string): Promise<unknown> };
  Grant: new (fields: { accountId: string; clientId: string }) => OidcModel & {
    addResourceScope(resource: string, scope: string): void;
  };
  AuthorizationCode: new (fields: Record<string, unknown>) => OidcModel;
}

/** What the code endpoint asks the provider for: one code of a user for a client. */
export interface CodeRequest {
  userId: string;
  clientId: string;
  redirectUri: string;
  scope: string[];
  /** RFC 7636, S256 only. */
  codeChallenge?: string;
}

/** oidc-provider plus the one thing it has no endpoint for here: a code without a login page. */
export interface TokenProvider {
  provider: OidcProvider;
  /** Issues a single-use, short-lived authorization code bound to the client and redirect URI. */
  issueCode(request: CodeRequest): Promise<string>;
}

interface Stored {
  payload: Record<string, unknown> & { grantId?: string; consumed?: number };
  expiresAt: number;
}

/**
 * oidc-provider's storage contract, in memory (codes, grants, refresh tokens, and the access
 * tokens of clients whose tokens are opaque: what introspection and revocation look up). Shared by the providers of successive reloads, so codes and
 * refresh tokens outlive a SIGHUP. Expired entries are skipped when read and swept each minute;
 * there is no timer per entry (a refresh token's lifetime can exceed what a timer can hold).
 */
class MemoryAdapter {
  private static readonly store = new Map<string, Stored>();
  private static sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly model: string) {
    MemoryAdapter.sweeper ??= setInterval(() => MemoryAdapter.sweep(), 60_000).unref();
  }

  private static sweep(now = Date.now()) {
    for (const [key, entry] of MemoryAdapter.store) {
      if (entry.expiresAt <= now) MemoryAdapter.store.delete(key);
    }
  }

  private key(id: string) {
    return `${this.model}:${id}`;
  }

  async upsert(id: string, payload: Stored['payload'], expiresIn?: number) {
    const expiresAt = expiresIn ? Date.now() + expiresIn * 1000 : Infinity;
    MemoryAdapter.store.set(this.key(id), { payload, expiresAt });
  }

  async find(id: string) {
    const entry = MemoryAdapter.store.get(this.key(id));
    if (!entry || entry.expiresAt <= Date.now()) return undefined;
    return entry.payload;
  }

  async findByUserCode() {
    return undefined;
  }

  async findByUid() {
    return undefined;
  }

  /** A code or refresh token used once: a second use is refused (and revokes its grant). */
  async consume(id: string) {
    const entry = MemoryAdapter.store.get(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id: string) {
    MemoryAdapter.store.delete(this.key(id));
  }

  /** A reused code or refresh token revokes everything issued from the same grant. */
  async revokeByGrantId(grantId: string) {
    for (const [key, entry] of MemoryAdapter.store) {
      if (entry.payload.grantId === grantId) MemoryAdapter.store.delete(key);
    }
  }
}

/**
 * An oidc-provider 8 instance that speaks what the chain's client expects, at light-oauth2's
 * path `/oauth2/token`: the client credentials grant; the authorization code grant for codes
 * `issueCode` makes (the code endpoint beside it authenticates the user); the refresh token grant
 * (a refresh token is issued with every code exchange and rotated on each use). Clients are
 * authenticated by secret (Basic); access tokens are RS256 JWTs signed with the configured key
 * and kid, carrying `client_id`, `scope` and, for a user's token, `user_id`.
 * oidc-provider is ESM-only, so it is loaded with a dynamic import from this CommonJS module.
 */
export async function createProvider(
  server: TokenServerConfig,
  { clients }: ClientsConfig,
  { users }: UsersConfig,
): Promise<TokenProvider> {
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
  const has = (map: object, key: string) => Object.prototype.hasOwnProperty.call(map, key);
  const tokenLifetime = (
    _ctx: unknown,
    token: { clientId: string; resourceServer?: { accessTokenTTL?: number } },
  ) => token.resourceServer?.accessTokenTTL ?? lifetimeOf(token.clientId);

  const registrations = Object.entries(clients).map(([clientId, c]) => {
    const userFacing = c.redirectUri.length > 0;
    return {
      client_id: clientId,
      ...(c.secret !== undefined ? { client_secret: c.secret } : {}),
      grant_types: userFacing
        ? ['client_credentials', 'authorization_code', 'refresh_token']
        : ['client_credentials'],
      response_types: userFacing ? [...CODE_ENDPOINT.responseTypes] : [],
      redirect_uris: c.redirectUri,
      // Sender-constrained tokens (bound-tokens.ts): client_secret_basic (light-oauth2's token
      // service reads the client's credentials from a Basic header only) or tls_client_auth,
      // and the token binding the client is registered for.
      ...boundTokenRegistration(c),
      ...(c.scope.length ? { scope: c.scope.join(' ') } : {}),
    };
  });
  // The token endpoint accepts the methods its clients are registered with, and no other.
  const clientAuthMethods = [
    ...new Set(Object.values(clients).map((c) => c.tokenEndpointAuthMethod)),
  ];

  const provider = new Provider(server.issuer, {
    adapter: MemoryAdapter,
    clients: registrations,
    clientAuthMethods,
    // What the code endpoint answers (it stands in for oidc-provider's authorization endpoint):
    // no implicit or hybrid response type, hence no implicit grant.
    responseTypes: [...CODE_ENDPOINT.responseTypes],
    jwks: { keys: [signingJwk] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: allScopes,
    // oidc-provider's authorization route is the code endpoint's path: the metadata advertises
    // it, and the code endpoint answers it before oidc-provider sees the request.
    routes: {
      authorization: CODE_ENDPOINT.path,
      token: '/oauth2/token',
      jwks: '/oauth2/jwks',
      ...INTROSPECTION_ROUTES,
    },
    // A user known when the code was issued and still in users.yml.
    findAccount: (_ctx: unknown, accountId: string) =>
      has(users, accountId) ? { accountId, claims: async () => ({ sub: accountId }) } : undefined,
    // light-oauth2's user claim.
    extraTokenClaims: (_ctx: unknown, token: { accountId?: string }) =>
      token.accountId ? { user_id: token.accountId } : undefined,
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(g: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    // light-oauth2 issues a new refresh token on each use; a used one is refused.
    rotateRefreshToken: true,
    ttl: {
      AuthorizationCode: server.codeLifetimeSeconds,
      RefreshToken: server.refreshTokenLifetimeSeconds,
      // The grant holds a user's consent for the codes and refresh tokens made from it.
      Grant: 365 * 24 * 3600,
      // Every access token's lifetime is its client's (the resource server's TTL carries it).
      AccessToken: tokenLifetime,
      ClientCredentials: tokenLifetime,
    },
    pkce: { methods: [...CODE_ENDPOINT.pkceMethods], required: () => false },
    features: {
      // Nothing of an OpenID provider's interactive side: no login pages, no ID tokens, hence no
      // userinfo, logout or pushed authorization requests.
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      clientCredentials: { enabled: true },
      // Sender-constrained tokens: mTLS (RFC 8705) and DPoP (RFC 9449), as token-server.yml says.
      ...boundTokenFeatures(server),
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
          // clients.yml `accessTokenFormat`: an opaque token is known by introspection only.
          accessTokenFormat: clients[client.clientId]?.accessTokenFormat ?? 'jwt',
          jwt: { sign: { alg: 'RS256', kid: server.signing.kid } },
        }),
      },
      // --- introspection (RFC 7662) and revocation (RFC 7009): introspection.ts -------------
      ...introspectionFeatures(),
    },
  });

  provider.use(
    metadataMiddleware({ scopes: allScopes, responseModes: CODE_ENDPOINT.responseModes }),
  );

  const issueCode = async (request: CodeRequest): Promise<string> => {
    const client = await provider.Client.find(request.clientId);
    const scope = request.scope.join(' ');
    const grant = new provider.Grant({ accountId: request.userId, clientId: request.clientId });
    grant.addResourceScope(server.audience, scope);
    const grantId = await grant.save();
    const code = new provider.AuthorizationCode({
      accountId: request.userId,
      client,
      grantId,
      redirectUri: request.redirectUri,
      scope,
      resource: server.audience,
      authTime: Math.floor(Date.now() / 1000),
      ...(request.codeChallenge
        ? { codeChallenge: request.codeChallenge, codeChallengeMethod: 'S256' }
        : {}),
    });
    return code.save();
  };
  return { provider, issueCode };
}
