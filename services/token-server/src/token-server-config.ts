import { ConfigLoader, listOf, text, z, type SchemaHelpers } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { parseDn } from './distinguished-name.js';

const port = z.number().int().min(0).max(65535);
const lifetime = z.number().int().positive();
/** RFC 6749 3.1.2. */
const redirectUri = z
  .url({ protocol: /^https?$/ })
  .refine((u) => !u.includes('#'), 'a redirect URI has no fragment')
  .refine(
    (u) => u.startsWith('https:') || /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])[:/]/.test(u),
    'a redirect URI is https (plain http only to localhost)',
  );
/** RFC 8414 2: the metadata must name the URL it is served from. */
const issuer = z.url().refine((u) => {
  if (!URL.canParse(u)) return true; // z.url() has said so already
  const url = new URL(u);
  const bare = url.pathname === '/' && !u.includes('?') && !u.includes('#');
  return url.protocol === 'https:' && bare;
}, 'the issuer is an https URL without a path, query or fragment, like https://localhost:6882');
const scope = z
  .union([z.array(z.string().regex(/^\S+$/)), z.string()])
  .transform((s) => (typeof s === 'string' ? s.split(/\s+/).filter(Boolean) : s));

const serverSchema = ({ file }: SchemaHelpers) =>
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
    tokenExchange: z
      .record(
        z.string(),
        z.strictObject({
          subjectAudience: listOf(z.string().min(1)),
          audience: listOf(z.string().min(1)),
          scope: scope.default([]),
        }),
      )
      .default({}),
  });
export type TokenServerConfig = z.output<ReturnType<typeof serverSchema>>;

const registration = z.strictObject({
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
});
export type ClientRegistration = z.output<typeof registration>;
export type Clients = Record<string, ClientRegistration>;

const clientsSchema = () =>
  z.strictObject({
    clients: z.record(
      z.string().regex(/^[A-Za-z0-9._-]+$/, 'client ids are letters, digits, . _ -'),
      registration.superRefine(registrationRules),
    ),
  });

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

const usersSchema = () =>
  z.strictObject({
    users: z
      .record(
        z.string().regex(/^[A-Za-z0-9._@-]+$/, 'ids are letters, digits, . _ @ -'),
        z.strictObject({ password: text().pipe(z.string().min(1)) }),
      )
      .default({}),
  });
export type Users = z.output<ReturnType<typeof usersSchema>>['users'];

/** users.yml is optional (no users: no authorization codes). */
export function loadTokenServerConfig(loader: ConfigLoader) {
  const server = loader.load('token-server', serverSchema, { required: true });
  const { clients } = loader.load('clients', clientsSchema, { required: true });
  featureRules(server, clients, loader.locate('clients').file!);
  const id = Object.keys(server.tokenExchange).find((name) => !Object.hasOwn(clients, name));
  if (id !== undefined) {
    const file = loader.locate('token-server').file!;
    throw new ConfigError(file, `tokenExchange.${id}`, 'names a client clients.yml does not have');
  }
  return { server, clients, users: loader.load('users', usersSchema).users };
}

const MTLS_OFF = 'needs mtls.enabled: true in token-server.yml (client certificates)';

/** A registration that needs a feature that is off would be refused at each token request. */
function featureRules({ mtls, dpop }: TokenServerConfig, clients: Clients, file: string): void {
  for (const [id, c] of Object.entries(clients)) {
    const refuse = (key: string, message: string) =>
      new ConfigError(file, `clients.${id}.${key}`, message);
    if (!mtls.enabled && c.tokenEndpointAuthMethod === 'tls_client_auth') {
      throw refuse('tokenEndpointAuthMethod', MTLS_OFF);
    }
    if (!mtls.enabled && c.certificateBoundAccessTokens) {
      throw refuse('certificateBoundAccessTokens', MTLS_OFF);
    }
    if (!dpop.enabled && c.dpopBoundAccessTokens) {
      throw refuse('dpopBoundAccessTokens', 'needs dpop.enabled: true in token-server.yml');
    }
  }
}
