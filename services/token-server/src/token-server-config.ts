import { ConfigLoader, listOf, text, z, type SchemaFactory } from '@chain/config';

/** token-server.yml: ports, TLS, signing key, served certificates, lifetimes. */
export interface TokenServerConfig {
  ip: string;
  tokenPort: number;
  keyPort: number;
  /** PEM key and certificate of both HTTPS listeners (absolute paths). */
  keyFile: string;
  certFile: string;
  issuer: string;
  audience: string;
  tokenLifetimeSeconds: number;
  /** Lifetime of an authorization code (single use). */
  codeLifetimeSeconds: number;
  /** Lifetime of a refresh token (each use gives a new one). */
  refreshTokenLifetimeSeconds: number;
  signing: { kid: string; keyFile: string };
  /** kid -> PEM certificate file, served by the key endpoints. */
  certificates: Record<string, string>;
  shutdownTimeoutMs: number;
}

export interface ClientRegistration {
  secret: string;
  /** Scopes the client may ask for. */
  scope: string[];
  tokenLifetimeSeconds?: number;
  /**
   * Redirect URIs the client's authorization codes may go to (exact match): a client with one
   * may use the authorization code and refresh token grants.
   */
  redirectUri: string[];
  /**
   * The form of its access tokens: `jwt` (default), or `opaque`, a random string that only the
   * introspection endpoint can tell about (RFC 7662).
   */
  accessTokenFormat: 'jwt' | 'opaque';
}

/** clients.yml: client id -> registration. */
export interface ClientsConfig {
  clients: Record<string, ClientRegistration>;
}

/** One user of the code endpoint (users.yml). */
export interface UserRegistration {
  /** Checked against the Basic credentials of `GET /oauth2/code` (development users only). */
  password: string;
}

/** users.yml: user id -> registration; the user id is the tokens' `user_id`. */
export interface UsersConfig {
  users: Record<string, UserRegistration>;
}

const port = z.number().int().min(0).max(65535);
/** An absolute https (or loopback http) URI without a fragment (RFC 6749 3.1.2). */
const redirectUri = z
  .url({ protocol: /^https?$/ })
  .refine((u) => !u.includes('#'), 'a redirect URI has no fragment')
  .refine(
    (u) => u.startsWith('https:') || /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])[:/]/.test(u),
    'a redirect URI is https (plain http only to localhost)',
  );
/**
 * The issuer: an https URL without a path, query or fragment (RFC 8414 2), since the metadata
 * is served at its `/.well-known/` paths and must name the URL it is served from.
 */
const issuer = z.url().refine((u) => {
  if (!URL.canParse(u)) return true; // z.url() has said so already
  const url = new URL(u);
  const bare = url.pathname === '/' && !u.includes('?') && !u.includes('#');
  return url.protocol === 'https:' && bare;
}, 'the issuer is an https URL without a path, query or fragment, like https://localhost:6882');
const lifetime = z.number().int().positive();
const scope = z
  .union([z.array(z.string().regex(/^\S+$/)), z.string()])
  .transform((s) => (typeof s === 'string' ? s.split(/\s+/).filter(Boolean) : s));

export const tokenServerConfigSchema: SchemaFactory<TokenServerConfig> = ({ file }) =>
  z.strictObject({
    ip: z.string().default('0.0.0.0'),
    tokenPort: port.default(6882),
    keyPort: port.default(6886),
    keyFile: file(),
    certFile: file(),
    issuer: issuer.default('https://localhost:6882'),
    audience: z.string().min(1).default('urn:chain:api'),
    tokenLifetimeSeconds: lifetime.default(600),
    codeLifetimeSeconds: lifetime.default(60),
    refreshTokenLifetimeSeconds: lifetime.default(86400),
    signing: z.strictObject({ kid: z.string().min(1).default('100'), keyFile: file() }),
    certificates: z.record(z.string(), file()).default({}),
    shutdownTimeoutMs: z.number().int().min(0).default(5000),
  });

export const clientsConfigSchema: SchemaFactory<ClientsConfig> = () =>
  z.strictObject({
    clients: z.record(
      z.string().regex(/^[A-Za-z0-9._-]+$/, 'client ids are letters, digits, . _ -'),
      z.strictObject({
        secret: z.string().min(1),
        scope: scope.default([]),
        tokenLifetimeSeconds: lifetime.optional(),
        redirectUri: listOf(redirectUri).default([]),
        accessTokenFormat: z.enum(['jwt', 'opaque']).default('jwt'),
      }),
    ),
  });

const id = () => z.string().regex(/^[A-Za-z0-9._@-]+$/, 'ids are letters, digits, . _ @ -');

export const usersConfigSchema: SchemaFactory<UsersConfig> = () =>
  z.strictObject({
    users: z.record(id(), z.strictObject({ password: text().pipe(z.string().min(1)) })).default({}),
  });

/**
 * Reads and checks the three files through the one loader (CONFIG_DIR overrides file by file);
 * users.yml is optional (no users: no authorization codes).
 */
export function loadTokenServerConfig(loader: ConfigLoader): {
  server: TokenServerConfig;
  clients: ClientsConfig;
  users: UsersConfig;
} {
  return {
    server: loader.load('token-server', tokenServerConfigSchema, { required: true }),
    clients: loader.load('clients', clientsConfigSchema, { required: true }),
    users: loader.load('users', usersConfigSchema),
  };
}
