import { createPrivateKey, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import Provider, { type Adapter, type AdapterPayload } from 'oidc-provider';
import { boundTokenFeatures, boundTokenRegistration } from './bound-tokens.js';
import { CODE_ENDPOINT, type CodeRequest } from './code-endpoint.js';
import { metadataMiddleware } from './metadata.js';
import { TOKEN_EXCHANGE, tokenExchange } from './token-exchange.js';
import type { Clients, TokenServerConfig, Users } from './token-server-config.js';

/**
 * oidc-provider's storage, in memory, one store for the providers of successive reloads: it
 * outlives a SIGHUP. Swept each minute (a refresh token's lifetime can exceed what a timer holds).
 */
const store = new Map<string, { payload: AdapterPayload; expiresAt: number }>();
let sweeper: NodeJS.Timeout | undefined;

class MemoryAdapter implements Adapter {
  constructor(private readonly model: string) {
    sweeper ??= setInterval(() => {
      const now = Date.now();
      for (const [key, entry] of store) if (entry.expiresAt <= now) store.delete(key);
    }, 60_000).unref();
  }

  private key = (id: string) => `${this.model}:${id}`;

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number) {
    const expiresAt = expiresIn ? Date.now() + expiresIn * 1000 : Infinity;
    store.set(this.key(id), { payload, expiresAt });
  }

  async find(id: string) {
    const entry = store.get(this.key(id));
    return entry && entry.expiresAt > Date.now() ? entry.payload : undefined;
  }

  async consume(id: string) {
    const entry = store.get(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id: string) {
    store.delete(this.key(id));
  }

  async revokeByGrantId(grantId: string) {
    for (const [key, entry] of store) if (entry.payload.grantId === grantId) store.delete(key);
  }

  // No device flow and no interactive sessions here: never looked up.
  findByUserCode = async () => undefined;
  findByUid = async () => undefined;
}

/** oidc-provider at light-oauth2's paths. */
export function createProvider(
  server: TokenServerConfig,
  clients: Clients,
  users: Users,
  keys: Record<string, string>,
) {
  const signingJwk = {
    ...createPrivateKey(fs.readFileSync(server.signing.keyFile, 'utf8')).export({ format: 'jwk' }),
    kid: server.signing.kid,
    alg: 'RS256',
    use: 'sig',
  };
  const allScopes = [...new Set(Object.values(clients).flatMap((c) => c.scope))];
  const lifetimeOf = (clientId = '') =>
    clients[clientId]?.tokenLifetimeSeconds ?? server.tokenLifetimeSeconds;
  const tokenLifetime = (
    _ctx: unknown,
    token: { clientId?: string; resourceServer?: { accessTokenTTL?: number } },
  ) => token.resourceServer?.accessTokenTTL ?? lifetimeOf(token.clientId);

  const exchange = tokenExchange(server, keys);
  // With a tokenExchange policy every client may send the grant: the policy answers it.
  const exchanging = Object.keys(server.tokenExchange).length > 0 ? [TOKEN_EXCHANGE] : [];
  const registrations = Object.entries(clients).map(([clientId, c]) => {
    const userFacing = c.redirectUri.length > 0;
    return {
      client_id: clientId,
      ...(c.secret !== undefined ? { client_secret: c.secret } : {}),
      grant_types: userFacing
        ? ['client_credentials', 'authorization_code', 'refresh_token', ...exchanging]
        : ['client_credentials', ...exchanging],
      response_types: userFacing ? [...CODE_ENDPOINT.responseTypes] : [],
      redirect_uris: c.redirectUri,
      ...boundTokenRegistration(c),
      ...(c.scope.length ? { scope: c.scope.join(' ') } : {}),
    };
  });

  const provider = new Provider(server.issuer, {
    adapter: MemoryAdapter,
    clients: registrations,
    // light-oauth2 reads client credentials from a Basic header only.
    clientAuthMethods: [...new Set(Object.values(clients).map((c) => c.tokenEndpointAuthMethod))],
    responseTypes: [...CODE_ENDPOINT.responseTypes],
    jwks: { keys: [signingJwk] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: allScopes,
    // The code endpoint answers its path before oidc-provider sees the request.
    routes: {
      authorization: CODE_ENDPOINT.path,
      token: '/oauth2/token',
      jwks: '/oauth2/jwks',
      // light-4j's tests use this introspection path.
      introspection: '/oauth2/introspection',
      revocation: '/oauth2/revocation',
    },
    findAccount: (_ctx, accountId) =>
      Object.hasOwn(users, accountId)
        ? { accountId, claims: async () => ({ sub: accountId }) }
        : undefined,
    extraTokenClaims: (_ctx, token) =>
      'accountId' in token && token.accountId ? { user_id: token.accountId } : undefined,
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // light-oauth2 issues a new refresh token on each use; a used one is refused.
    rotateRefreshToken: true,
    ttl: {
      AuthorizationCode: server.codeLifetimeSeconds,
      RefreshToken: server.refreshTokenLifetimeSeconds,
      Grant: 365 * 24 * 3600,
      AccessToken: tokenLifetime,
      ClientCredentials: tokenLifetime,
    },
    pkce: { required: () => false },
    formats: { customizers: { jwt: exchange.customize } },
    // oidc-provider 9 adds Ed25519 (RFC 9864's name); EdDSA is the name resource servers know.
    enabledJWA: { dPoPSigningAlgValues: ['ES256', 'EdDSA'] },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      clientCredentials: { enabled: true },
      ...boundTokenFeatures(server),
      resourceIndicators: {
        enabled: true,
        defaultResource: () => server.audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, _resource, client) => ({
          scope: (clients[client.clientId]?.scope ?? []).join(' '),
          audience: server.audience,
          accessTokenTTL: lifetimeOf(client.clientId),
          accessTokenFormat: clients[client.clientId]?.accessTokenFormat ?? 'jwt',
          jwt: { sign: { alg: 'RS256', kid: server.signing.kid } },
        }),
      },
      // A resource server introspects access tokens issued to others (a public client: none); a
      // refresh token is for the token server only (RFC 6749 section 1.5): it is introspected
      // only for the client it was issued to, any other gets {"active":false}.
      introspection: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) =>
          client.clientAuthMethod !== 'none' &&
          (token.kind !== 'RefreshToken' || token.clientId === client.clientId),
      },
      revocation: { enabled: true },
    },
  });
  if (exchanging.length > 0) exchange.register(provider);
  provider.use(metadataMiddleware(allScopes, CODE_ENDPOINT.responseModes));

  const issueCode = async (request: CodeRequest): Promise<string> => {
    const { userId: accountId, clientId, redirectUri, scope, codeChallenge } = request;
    const grant = new provider.Grant({ accountId, clientId });
    grant.addResourceScope(server.audience, scope.join(' '));
    const code = new provider.AuthorizationCode({
      accountId,
      client: (await provider.Client.find(clientId))!,
      grantId: await grant.save(),
      gty: 'authorization_code', // asked by the types; a code does not keep it
      redirectUri,
      scope: scope.join(' '),
      resource: server.audience,
      authTime: Math.floor(Date.now() / 1000),
      ...(codeChallenge ? { codeChallenge, codeChallengeMethod: 'S256' } : {}),
    });
    return code.save();
  };
  return { provider, issueCode };
}
