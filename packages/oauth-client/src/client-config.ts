import {
  configFile,
  listOf,
  mapOf,
  readConfigFile,
  text,
  z,
  type Light4jKey,
  type SchemaHelpers,
} from '@chain/config';
import { ConfigError } from '@chain/errors';

const url = () => z.url({ protocol: /^https?$/ });
const uri = () => z.string().startsWith('/');
const scope = z
  .union([z.array(z.string()), z.string()])
  .transform((s) => (typeof s === 'string' ? s.split(/\s+/).filter(Boolean) : s))
  .optional();
const grant = z.strictObject({
  uri: uri(),
  client_id: text(),
  client_secret: text().optional(),
  scope,
});
const oneOrMore = listOf(z.string().min(1)).optional();
/** A grant of the service's own tokens: bound (RFC 8705, RFC 9449) and authenticated as it says. */
const ownGrant = grant.extend({
  tokenBinding: z.enum(['none', 'mtls', 'dpop']).optional(),
  token_endpoint_auth_method: z.enum(['client_secret_basic', 'tls_client_auth']).optional(),
});

const notHere = (note: string): Light4jKey => ({ note });
const pemStores = notHere('trust and key stores are PEM files here, without a password');
const ONE_CLIENT =
  'every call of the service, token and key requests too, follows request.enableHttp2';

const everyToken = (key: string) => notHere(`oauth.token.${key} applies to every token`);
const SERVERS = 'oauth.token.client_credentials.serviceIdAuthServers.*.';

const LIGHT4J_KEYS: Record<string, Light4jKey> = {
  'tls.trustStorePass': pemStores,
  'tls.keyStorePass': pemStores,
  'tls.keyPass': pemStores,
  'tls.defaultCertPassword': pemStores,
  'tls.defaultGroupKey': notHere('trusted names are not checked here'),
  'tls.trustedNames': notHere('trusted names are not checked here'),
  'oauth.token.cache': notHere('tokens are cached per client and scope set'),
  'oauth.token.proxyHost': notHere('no proxy'),
  'oauth.token.proxyPort': notHere('no proxy'),
  'oauth.token.enableHttp2': notHere(ONE_CLIENT),
  'oauth.token.token_exchange.subjectToken': {
    same: '',
    note: 'the subject token is the token each request brings',
  },
  'oauth.token.key.proxyHost': notHere('no proxy'),
  'oauth.token.key.proxyPort': notHere('no proxy'),
  'oauth.token.key.enableHttp2': notHere(ONE_CLIENT),
  'oauth.token.key.serviceIdAuthServers': notHere(
    'one key server per service; the certificates of other token servers go in security.yml jwt.certificate',
  ),
  'oauth.key.enableHttp2': notHere(ONE_CLIENT),
  // light-4j's AuthServerConfig.
  [SERVERS + 'enableHttp2']: notHere(ONE_CLIENT),
  [SERVERS + 'proxyHost']: notHere('no proxy'),
  [SERVERS + 'proxyPort']: notHere('no proxy'),
  [SERVERS + 'serviceId']: notHere('server_url is used; no service discovery'),
  [SERVERS + 'audience']: notHere('audience is checked by the service that verifies the token'),
  [SERVERS + 'tokenRenewBeforeExpired']: everyToken('tokenRenewBeforeExpired'),
  [SERVERS + 'expiredRefreshRetryDelay']: everyToken('expiredRefreshRetryDelay'),
  [SERVERS + 'earlyRefreshRetryDelay']: everyToken('earlyRefreshRetryDelay'),
  'oauth.sign': notHere('no signing service here'),
  'oauth.deref': notHere('no reference tokens here'),
  'request.injectOpenTracing': { same: false },
  'request.injectCallerId': { same: false },
  'request.connectionPoolSize': notHere('one connection pool per origin'),
  'request.connectionExpireTime': notHere('one connection pool per origin'),
  'request.maxReqPerConn': notHere('one connection pool per origin'),
  'request.maxConnectionNumPerHost': notHere('one connection pool per origin'),
  'request.minConnectionNumPerHost': notHere('one connection pool per origin'),
  'request.maxRequestRetry': notHere(
    'a GET is retried once on a fresh connection when a kept-alive one was reset, never more',
  ),
  'request.requestRetryDelay': notHere('the one retry of a reset connection is immediate'),
  'request.poolMetricsEnabled': { same: false },
  'request.poolWarmUpEnabled': { same: false },
  'request.poolWarmUpSize': notHere('no pool warm-up'),
  'request.healthCheckEnabled': notHere('no connection health checks'),
  'request.healthCheckIntervalMs': notHere('no connection health checks'),
};

const clientShape = ({ path }: SchemaHelpers) =>
  z.strictObject({
    tls: z
      .strictObject({
        verifyHostname: z.boolean().default(true),
        loadDefaultTrustStore: z.boolean().default(false),
        loadTrustStore: z.boolean().default(true),
        trustStore: path().optional(),
        loadKeyStore: z.boolean().default(false),
        keyStore: path().optional(),
        tlsVersion: z.enum(['TLSv1.2', 'TLSv1.3']).optional(),
      })
      .prefault({}),
    request: z
      .strictObject({
        timeout: z.number().int().positive().default(3000),
        connectTimeout: z.number().int().positive().default(2000),
        errorThreshold: z.number().int().min(0).default(2),
        resetTimeout: z.number().int().positive().default(7000),
        enableHttp2: z.boolean().default(false),
        http1Client: z
          .never({
            error:
              'removed: every call goes over undici (HTTP/1.1, or HTTP/2 with request.enableHttp2); remove the key',
          })
          .optional(),
      })
      .prefault({}),
    // light-4j writes `pathPrefixServices: ${client.pathPrefixServices:}`: empty is none.
    pathPrefixServices: mapOf(z.string().min(1))
      .refine((m) => Object.keys(m).every((prefix) => prefix.startsWith('/')), {
        message: 'every path prefix starts with /',
      })
      .default({}),
    oauth: z
      .strictObject({
        multipleAuthServers: z.boolean().default(false),
        token: z
          .strictObject({
            server_url: url().optional(),
            serviceId: z.string().optional(),
            tokenRenewBeforeExpired: z.number().int().min(0).default(60000),
            expiredRefreshRetryDelay: z.number().int().min(0).default(2000),
            earlyRefreshRetryDelay: z.number().int().min(0).default(4000),
            authorization_code: grant.extend({ redirect_uri: z.string().optional() }).optional(),
            client_credentials: ownGrant
              .extend({
                // Required unless multipleAuthServers (`clientRules`).
                client_id: text().optional(),
                // Unset `server_url` and `uri` are `oauth.token`'s.
                serviceIdAuthServers: z
                  .record(
                    z.string().min(1),
                    grant.extend({
                      server_url: url().optional(),
                      uri: uri().optional(),
                      client_secret: text(),
                    }),
                  )
                  .optional(),
              })
              .optional(),
            // RFC 8693, on with `audience`: each call's token exchanged for one for the downstream.
            token_exchange: ownGrant
              .extend({
                uri: uri().default('/oauth2/token'),
                audience: z.string().optional(),
                subjectTokenType: z
                  .string()
                  .transform((t) => t || 'urn:ietf:params:oauth:token-type:jwt')
                  .default('urn:ietf:params:oauth:token-type:jwt'),
              })
              .optional(),
            // The refresh grant; its client is authorization_code's when it names none.
            refresh_token: grant
              .extend({
                uri: uri().default('/oauth2/token'),
                client_id: text().optional(),
              })
              .optional(),
          })
          .prefault({}),
        key: z
          .strictObject({
            server_url: url().optional(),
            serviceId: z.string().optional(),
            uri: uri().default('/oauth2/key'),
            client_id: text().optional(),
            client_secret: text().optional(),
            jwk: z.boolean().default(false),
            audience: oneOrMore,
            issuer: oneOrMore,
          })
          .prefault({}),
        introspection: z
          .strictObject({
            server_url: url(),
            uri: uri().default('/oauth2/introspection'),
            client_id: text(),
            client_secret: text().optional(),
          })
          .optional(),
      })
      .prefault({}),
  });

type ClientShape = z.output<ReturnType<typeof clientShape>>;

/** The trust store and the key store read when client.yml loads (when they are used). */
type ReadStores = { trustStorePem?: string; keyStorePem?: ReturnType<typeof keyAndCertificate> };

export type ClientConfig = ClientShape & { tls: ReadStores };

export const clientConfigSchema = configFile<ClientConfig>(
  (helpers) =>
    clientShape(helpers).transform((cfg, ctx) => {
      const tls = { ...cfg.tls, ...readStores(cfg.tls, ctx) };
      clientRules(cfg, ctx);
      return { ...cfg, tls };
    }),
  {
    light4j: LIGHT4J_KEYS,
    // light-4j moved the key server section under oauth.token; both names are read.
    aliases: { 'oauth.token.key': 'oauth.key' },
  },
);

/** The trust store's PEM text and the key store's key and certificate, when they are used. */
function readStores(tls: ClientShape['tls'], ctx: z.RefinementCtx): ReadStores {
  const store = <T>(
    key: 'trustStore' | 'keyStore',
    fit: (pem: string) => T | undefined,
    or: string,
  ) => {
    const file = tls[key];
    if (!tls[key === 'trustStore' ? 'loadTrustStore' : 'loadKeyStore']) return undefined;
    if (!file)
      return void ctx.addIssue({ code: 'custom', path: ['tls', key], message: 'is required' });
    return readConfigFile(ctx, ['tls', key], file, (bytes) => {
      const fitted = fit(bytes.toString('utf8'));
      if (fitted === undefined) throw new Error(`${file} ${or}`);
      return fitted;
    });
  };
  return {
    trustStorePem: store(
      'trustStore',
      (pem) => (pem.includes('-----BEGIN CERTIFICATE-----') ? pem : undefined),
      'is not a PEM file of CA certificates (a Java trust store? export it with keytool -exportcert -rfc)',
    ),
    keyStorePem: store(
      'keyStore',
      keyAndCertificate,
      'must hold a PEM private key and its certificate (a Java key store? export both as PEM)',
    ),
  };
}

function clientRules(cfg: ClientShape, ctx: z.RefinementCtx): void {
  const issue = (path: (string | number)[], message: string) =>
    ctx.addIssue({ code: 'custom', path, message });
  const { tls, oauth } = cfg;
  const cc = oauth.token.client_credentials;
  const at = ['oauth', 'token', 'client_credentials'];
  // Without the key store's certificate tls_client_auth is refused, mtls binds to nothing.
  const certificateUses = [
    ['tokenBinding', 'mtls'],
    ['token_endpoint_auth_method', 'tls_client_auth'],
  ] as const;
  for (const grant of ['client_credentials', 'token_exchange'] as const) {
    for (const [key, value] of certificateUses) {
      if (!tls.loadKeyStore && oauth.token[grant]?.[key] === value) {
        const path = ['oauth', 'token', grant, key];
        issue(path, `${value} needs tls.loadKeyStore: true (the certificate)`);
      }
    }
  }
  if (!oauth.multipleAuthServers) {
    if (cc && cc.client_id === undefined) issue([...at, 'client_id'], 'is required');
    return;
  }
  const servers = cc?.serviceIdAuthServers ?? {};
  if (Object.keys(servers).length === 0) {
    issue(
      [...at, 'serviceIdAuthServers'],
      'is required (at least one serviceId) when oauth.multipleAuthServers is true',
    );
  }
  for (const [serviceId, server] of Object.entries(servers)) {
    if (!server.server_url && !oauth.token.server_url) {
      issue(
        [...at, 'serviceIdAuthServers', serviceId, 'server_url'],
        'is required (or oauth.token.server_url)',
      );
    }
  }
  for (const [prefix, serviceId] of Object.entries(cfg.pathPrefixServices)) {
    if (!Object.hasOwn(servers, serviceId)) {
      issue(
        ['pathPrefixServices', prefix],
        `names serviceId "${serviceId}", which has no oauth.token.client_credentials.serviceIdAuthServers entry`,
      );
    }
  }
}

/** secret.yml's key of the secret of each client in client.yml. */
const SECRET_KEY = {
  client_credentials: 'clientCredentialsClientSecret',
  authorization_code: 'authorizationCodeClientSecret',
  refresh_token: 'refreshTokenClientSecret',
  token_exchange: 'tokenExchangeClientSecret',
  key: 'keyClientSecret',
  introspection: 'introspectionClientSecret',
} as const;

export type SecretConfig = { [key in (typeof SECRET_KEY)[keyof typeof SECRET_KEY]]?: string };

const secretShape = () =>
  z.strictObject(
    Object.fromEntries(Object.values(SECRET_KEY).map((key) => [key, text().optional()])),
  );

export const secretConfigSchema = configFile<SecretConfig>(secretShape, {
  light4j: Object.fromEntries(
    [
      'serverKeystorePass',
      'serverKeyPass',
      'serverTruststorePass',
      'clientKeystorePass',
      'clientKeyPass',
      'clientTruststorePass',
      'consulToken',
      'emailPassword',
    ].map((key) => [key, { note: 'not used here' }]),
  ),
});

/** secret.yml's, else light-4j's `client_secret` of client.yml. */
export function clientSecrets(client: ClientConfig, secret: SecretConfig): SecretConfig {
  const { token, key, introspection } = client.oauth;
  const sections = { ...token, key, introspection };
  const secrets = Object.entries(SECRET_KEY) as [keyof typeof SECRET_KEY, keyof SecretConfig][];
  return Object.fromEntries(
    secrets.map(([at, name]) => [name, secret[name] ?? sections[at]?.client_secret]),
  );
}

export type GrantName =
  'client_credentials' | 'authorization_code' | 'refresh_token' | 'token_exchange';

export interface ClientFiles {
  client: ClientConfig;
  secret: SecretConfig;
  clientFile: string;
  secretFile: string;
}

export interface GrantSettings {
  serverUrl: string;
  uri: string;
  clientId: string;
  authMethod: 'client_secret_basic' | 'tls_client_auth';
  clientSecret?: string;
}

/** Checked when used: light-4j's client.yml lists grants without `server_url` (service discovery). */
export function grantSettings(
  files: ClientFiles,
  grant: GrantName,
  why = `is required for the ${grant} grant`,
): GrantSettings {
  const { token } = files.client.oauth;
  const refresh = token.refresh_token;
  if (grant === 'refresh_token' && !refresh?.client_id) {
    const code = grantSettings(files, 'authorization_code', why);
    return refresh ? { ...code, uri: refresh.uri } : code;
  }
  const missing = (file: string, key: string) => new ConfigError(file, key, why);
  const cfg = token[grant];
  if (!cfg) throw missing(files.clientFile, `oauth.token.${grant}`);
  if (!token.server_url) throw missing(files.clientFile, 'oauth.token.server_url');
  if (!cfg.client_id) throw missing(files.clientFile, `oauth.token.${grant}.client_id`);
  const settings = { serverUrl: token.server_url, uri: cfg.uri, clientId: cfg.client_id };
  if ('token_endpoint_auth_method' in cfg && cfg.token_endpoint_auth_method === 'tls_client_auth') {
    return { ...settings, authMethod: 'tls_client_auth' };
  }
  const clientSecret = clientSecrets(files.client, files.secret)[SECRET_KEY[grant]];
  if (!clientSecret) throw missing(files.secretFile, SECRET_KEY[grant]);
  return { ...settings, authMethod: 'client_secret_basic', clientSecret };
}

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----/g;

/** The private key and the certificate of a PEM key store, or undefined without both. */
function keyAndCertificate(pem: string): { key: string; cert: string } | undefined {
  const blocks = pem.match(PEM_BLOCK) ?? [];
  const key = blocks.filter((b) => /PRIVATE KEY-----/.test(b.split('\n')[0])).join('\n');
  const cert = blocks.filter((b) => b.startsWith('-----BEGIN CERTIFICATE')).join('\n');
  return key && cert ? { key, cert } : undefined;
}
