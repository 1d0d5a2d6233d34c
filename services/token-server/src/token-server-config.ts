import { ConfigLoader, listOf, text, z, type SchemaFactory } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { parseDn } from './distinguished-name';

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
  /**
   * RFC 8705 at the token port: it asks every client for a certificate (optional: a client
   * without one is served as before), authenticates `tls_client_auth` clients by a certificate
   * of `caFile`, and binds the tokens of clients registered for it to their certificate.
   */
  mtls: { enabled: boolean; caFile?: string };
  /** RFC 9449: a token request with a DPoP proof gets a token bound to the proof's key. */
  dpop: { enabled: boolean };
}

/** How a client authenticates at the token endpoint (RFC 7591 `token_endpoint_auth_method`). */
export type ClientAuthMethod = 'client_secret_basic' | 'tls_client_auth';

export interface ClientRegistration {
  /** Its secret: at the token endpoint with `client_secret_basic`, and at the key endpoints. */
  secret?: string;
  tokenEndpointAuthMethod: ClientAuthMethod;
  /** `tls_client_auth`: the subject DN (RFC 4514) its certificate must have. */
  tlsClientAuthSubjectDn?: string;
  /** RFC 8705 `tls_client_certificate_bound_access_tokens`: its tokens carry `cnf.x5t#S256`. */
  certificateBoundAccessTokens: boolean;
  /** RFC 9449 `dpop_bound_access_tokens`: a token request without a DPoP proof is refused. */
  dpopBoundAccessTokens: boolean;
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
    mtls: z
      .strictObject({ enabled: z.boolean().default(false), caFile: file().optional() })
      .prefault({})
      .refine((m) => !m.enabled || m.caFile !== undefined, {
        path: ['caFile'],
        message: 'is required when mtls.enabled is true (the CA of the client certificates)',
      }),
    dpop: z.strictObject({ enabled: z.boolean().default(false) }).prefault({}),
  });

export const clientsConfigSchema: SchemaFactory<ClientsConfig> = () =>
  z.strictObject({
    clients: z.record(
      z.string().regex(/^[A-Za-z0-9._-]+$/, 'client ids are letters, digits, . _ -'),
      z
        .strictObject({
          secret: z.string().min(1).optional(),
          tokenEndpointAuthMethod: z
            .enum(['client_secret_basic', 'tls_client_auth'])
            .default('client_secret_basic'),
          tlsClientAuthSubjectDn: z.string().min(1).optional(),
          certificateBoundAccessTokens: z.boolean().default(false),
          dpopBoundAccessTokens: z.boolean().default(false),
          scope: scope.default([]),
          tokenLifetimeSeconds: lifetime.optional(),
          redirectUri: listOf(redirectUri).default([]),
          accessTokenFormat: z.enum(['jwt', 'opaque']).default('jwt'),
        })
        .superRefine(registrationRules),
    ),
  });

/** The rules of one registration across its keys (those across files: `loadTokenServerConfig`). */
function registrationRules(c: ClientRegistration, ctx: z.RefinementCtx): void {
  const issue = (key: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: [key], message });
  if (c.tokenEndpointAuthMethod === 'client_secret_basic' && c.secret === undefined) {
    issue('secret', 'is required (tokenEndpointAuthMethod client_secret_basic)');
  }
  if (c.tokenEndpointAuthMethod === 'tls_client_auth') {
    if (c.tlsClientAuthSubjectDn === undefined) {
      issue('tlsClientAuthSubjectDn', 'is required (tokenEndpointAuthMethod tls_client_auth)');
    } else if (parseDn(c.tlsClientAuthSubjectDn) === undefined) {
      issue(
        'tlsClientAuthSubjectDn',
        'is not a distinguished name in RFC 4514 form, like CN=api-a,O=example',
      );
    }
  } else if (c.tlsClientAuthSubjectDn !== undefined) {
    issue('tlsClientAuthSubjectDn', 'is used with tokenEndpointAuthMethod tls_client_auth only');
  }
  if (c.certificateBoundAccessTokens && c.dpopBoundAccessTokens) {
    issue(
      'dpopBoundAccessTokens',
      'cannot be true with certificateBoundAccessTokens (a token is bound to one proof of possession)',
    );
  }
}

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
  const server = loader.load('token-server', tokenServerConfigSchema, { required: true });
  const clients = loader.load('clients', clientsConfigSchema, { required: true });
  featureRules(server, clients, loader.locate('clients').file!);
  return { server, clients, users: loader.load('users', usersConfigSchema) };
}

/**
 * A registration that needs a feature of token-server.yml which is off would be refused at each
 * token request: it stops the server instead, naming the client's key.
 */
function featureRules(server: TokenServerConfig, { clients }: ClientsConfig, file: string): void {
  for (const [id, c] of Object.entries(clients)) {
    const at = (key: string) => `clients.${id}.${key}`;
    if (!server.mtls.enabled) {
      if (c.tokenEndpointAuthMethod === 'tls_client_auth') {
        throw new ConfigError(file, at('tokenEndpointAuthMethod'), MTLS_OFF);
      }
      if (c.certificateBoundAccessTokens) {
        throw new ConfigError(file, at('certificateBoundAccessTokens'), MTLS_OFF);
      }
    }
    if (!server.dpop.enabled && c.dpopBoundAccessTokens) {
      throw new ConfigError(
        file,
        at('dpopBoundAccessTokens'),
        'needs dpop.enabled: true in token-server.yml',
      );
    }
  }
}

const MTLS_OFF = 'needs mtls.enabled: true in token-server.yml (client certificates)';
