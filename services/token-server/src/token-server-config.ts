import { ConfigLoader, z, type SchemaFactory } from '@chain/config';

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
}

/** clients.yml: client id -> registration. */
export interface ClientsConfig {
  clients: Record<string, ClientRegistration>;
}

const port = z.number().int().min(0).max(65535);
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
    issuer: z.url().default('https://localhost:6882'),
    audience: z.string().min(1).default('urn:chain:api'),
    tokenLifetimeSeconds: lifetime.default(600),
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
      }),
    ),
  });

/** Reads and checks both files through the one loader (CONFIG_DIR overrides file by file). */
export function loadTokenServerConfig(loader: ConfigLoader): {
  server: TokenServerConfig;
  clients: ClientsConfig;
} {
  return {
    server: loader.load('token-server', tokenServerConfigSchema, { required: true }),
    clients: loader.load('clients', clientsConfigSchema, { required: true }),
  };
}
