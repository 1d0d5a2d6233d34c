import fs from 'node:fs';
import {
  configFile,
  listOf,
  mapOf,
  text,
  z,
  type Light4jKey,
  type SchemaHelpers,
} from '@chain/config';
import { ConfigError } from '@chain/errors';
import { pemParts } from './tls-options';

const url = () => z.url({ protocol: /^https?$/ });
const scope = z
  .union([z.array(z.string()), z.string()])
  .transform((s) => (typeof s === 'string' ? s.split(/\s+/).filter(Boolean) : s))
  .optional();
const grant = z.strictObject({
  uri: z.string().startsWith('/'),
  client_id: text(),
  client_secret: text().optional(),
  scope,
});
/** One or several values: `aud: x` or a list (light-4j's audience is one string). */
const oneOrMore = listOf(z.string().min(1)).optional();

/** A light-4j key about Java key stores, which are PEM files here. */
const pemStores: Light4jKey = {
  note: 'trust and key stores are PEM files here, without a password',
};
const notHere = (note: string): Light4jKey => ({ note });
/** Token and key requests go over the client of downstream calls. */
const ONE_CLIENT =
  'every call of the service, token and key requests too, follows request.enableHttp2';

/** light-4j's client.yml keys this project does not implement. */
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
  'oauth.token.token_exchange': notHere('the token exchange grant is not used here'),
  'oauth.token.key.proxyHost': notHere('no proxy'),
  'oauth.token.key.proxyPort': notHere('no proxy'),
  'oauth.token.key.enableHttp2': notHere(ONE_CLIENT),
  'oauth.token.key.serviceIdAuthServers': notHere(
    'one key server per service; the certificates of other token servers go in security.yml jwt.certificate',
  ),
  'oauth.key.enableHttp2': notHere(ONE_CLIENT),
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

const PEM_CERTIFICATE = '-----BEGIN CERTIFICATE-----';

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** light-4j's keys of an AuthServerConfig that this project does not implement. */
const AUTH_SERVER_LIGHT4J_KEYS: Record<string, string> = {
  proxyHost: 'no proxy',
  proxyPort: 'no proxy',
  enableHttp2: ONE_CLIENT,
  serviceId: 'server_url is used; no service discovery',
  audience: 'audience is checked by the service that verifies the token',
  tokenRenewBeforeExpired: 'oauth.token.tokenRenewBeforeExpired applies to every token',
  expiredRefreshRetryDelay: 'oauth.token.expiredRefreshRetryDelay applies to every token',
  earlyRefreshRetryDelay: 'oauth.token.earlyRefreshRetryDelay applies to every token',
};

/** client.yml's keys and defaults, each key checked alone; `clientRules` checks them together. */
function clientShape({ path, warn }: SchemaHelpers) {
  const at = 'oauth.token.client_credentials.serviceIdAuthServers';
  // light-4j's AuthServerConfig keys that do nothing here: one warning each, then the entry
  // is checked strictly (a misspelled key stops the service, as anywhere else).
  const serviceIdAuthServers = z
    .preprocess(
      (entries) => {
        if (!isMap(entries)) return entries;
        const out: Record<string, unknown> = {};
        for (const [serviceId, entry] of Object.entries(entries)) {
          if (!isMap(entry)) {
            out[serviceId] = entry;
            continue;
          }
          const kept: Record<string, unknown> = {};
          for (const [key, value] of Object.entries(entry)) {
            const note = AUTH_SERVER_LIGHT4J_KEYS[key];
            if (note === undefined) kept[key] = value;
            else
              warn(
                `${at}.${serviceId}.${key}`,
                `light-4j key not supported here; ignored (${note})`,
              );
          }
          out[serviceId] = kept;
        }
        return out;
      },
      // light-4j's AuthServerConfig: the token server and client of one downstream serviceId.
      // Unset `server_url` and `uri` are those of `oauth.token` and its `client_credentials`.
      z.record(
        z.string().min(1),
        z.strictObject({
          server_url: url().optional(),
          uri: z.string().startsWith('/').optional(),
          client_id: text(),
          client_secret: text(),
          scope,
        }),
      ),
    )
    .optional();
  return z.strictObject({
    tls: z
      .strictObject({
        verifyHostname: z.boolean().default(true),
        /** Trust the system's CA certificates too (light-4j; default false here). */
        loadDefaultTrustStore: z.boolean().default(false),
        loadTrustStore: z.boolean().default(true),
        /** PEM file of trusted CA certificates. */
        trustStore: path().optional(),
        loadKeyStore: z.boolean().default(false),
        /** PEM file holding the client's private key and certificate, for two-way TLS. */
        keyStore: path().optional(),
        /** Lowest TLS version spoken (light-4j's `tlsVersion`). */
        tlsVersion: z.enum(['TLSv1.2', 'TLSv1.3']).optional(),
      })
      .prefault({}),
    request: z
      .strictObject({
        /** The whole call (connect, answer and body), ms. */
        timeout: z.number().int().positive().default(3000),
        /** Opening a connection (TCP and TLS handshake), ms. */
        connectTimeout: z.number().int().positive().default(2000),
        /** Failures in a row that open a downstream's circuit; 0 turns the breaker off. */
        errorThreshold: z.number().int().min(0).default(2),
        /** How long an open circuit fails calls at once before one trial call, ms. */
        resetTimeout: z.number().int().positive().default(7000),
        /** light-4j: HTTP/2 to the origins that offer it (ALPN). */
        enableHttp2: z.boolean().default(false),
        http1Client: z
          .never({
            error:
              'removed: every call goes over undici (HTTP/1.1, or HTTP/2 with request.enableHttp2); remove the key',
          })
          .optional(),
      })
      .prefault({}),
    /** Path prefix of a downstream call -> the serviceId whose auth server gives its token. */
    // light-4j writes `pathPrefixServices: ${client.pathPrefixServices:}`: empty is none.
    pathPrefixServices: mapOf(z.string().min(1))
      .refine((m) => Object.keys(m).every((prefix) => prefix.startsWith('/')), {
        message: 'every path prefix starts with /',
      })
      .default({}),
    oauth: z
      .strictObject({
        /** Tokens of different downstreams come from different auth servers. */
        multipleAuthServers: z.boolean().default(false),
        token: z
          .strictObject({
            server_url: url().optional(),
            serviceId: z.string().optional(),
            tokenRenewBeforeExpired: z.number().int().min(0).default(60000),
            expiredRefreshRetryDelay: z.number().int().min(0).default(2000),
            earlyRefreshRetryDelay: z.number().int().min(0).default(4000),
            authorization_code: grant
              .extend({ redirect_uri: z.string().optional(), scope })
              .optional(),
            client_credentials: grant
              .extend({
                // Unused with multipleAuthServers: only the entries below are used then.
                client_id: text().optional(),
                serviceIdAuthServers,
                /**
                 * Ours: what the service's own tokens are bound to. `mtls`: the certificate of
                 * tls.keyStore (RFC 8705); `dpop`: the service's DPoP key (RFC 9449). Absent: none.
                 */
                tokenBinding: z.enum(['none', 'mtls', 'dpop']).optional(),
                /**
                 * RFC 8705 `tls_client_auth`: the client authenticates with the certificate of
                 * tls.keyStore (`client_id` in the form, no secret) instead of its secret.
                 * Absent: client_secret_basic.
                 */
                token_endpoint_auth_method: z
                  .enum(['client_secret_basic', 'tls_client_auth'])
                  .optional(),
              })
              .optional(),
            // The refresh grant; its client is authorization_code's when it names none.
            refresh_token: grant
              .extend({
                uri: z.string().startsWith('/').default('/oauth2/token'),
                client_id: text().optional(),
              })
              .optional(),
          })
          .prefault({}),
        key: z
          .strictObject({
            server_url: url().optional(),
            serviceId: z.string().optional(),
            uri: z.string().startsWith('/').default('/oauth2/key'),
            client_id: text().optional(),
            /** light-4j; secret.yml `keyClientSecret` wins when both are set. */
            client_secret: text().optional(),
            /** Ours: the key server publishes a JWKS at `{server_url}{uri}`, not PEM per kid. */
            jwk: z.boolean().default(false),
            /** light-4j: a token's `aud` must hold one of these. */
            audience: oneOrMore,
            /** Ours: a token's `iss` must be one of these. */
            issuer: oneOrMore,
          })
          .prefault({}),
        /**
         * Ours: the introspection server (RFC 7662) of opaque tokens, for security.yml
         * `enableVerifySwt`; without it, light-4j's place for it, `oauth.key`, when JWTs are not
         * verified.
         */
        introspection: z
          .strictObject({
            server_url: url(),
            uri: z.string().startsWith('/').default('/oauth2/introspection'),
            client_id: text(),
            /** secret.yml `introspectionClientSecret` wins when both are set. */
            client_secret: text().optional(),
          })
          .optional(),
      })
      .prefault({}),
  });
}

/**
 * client.yml: light-4j's keys that this project implements (the key server section also under
 * light-4j's newer name `oauth.token.key`), plus `oauth.key.jwk` and `oauth.key.issuer` (ours).
 */
export type ClientConfig = z.output<ReturnType<typeof clientShape>>;

export const clientConfigSchema = configFile<ClientConfig>(
  (helpers) => clientShape(helpers).superRefine(clientRules),
  {
    light4j: LIGHT4J_KEYS,
    // light-4j moved the key server section under oauth.token; both names are read.
    aliases: { 'oauth.token.key': 'oauth.key' },
  },
);

/**
 * Every rule of client.yml that joins several of its keys, each with the path of the key it
 * names (the ConfigError names it); nothing re-checks them later. Rules that need another file
 * are `grantSettings` (client.yml and secret.yml) and the runtime's (security.yml).
 */
function clientRules(cfg: ClientConfig, ctx: z.RefinementCtx): void {
  const issue = (path: (string | number)[], message: string) =>
    ctx.addIssue({ code: 'custom', path, message });
  const { tls, oauth } = cfg;
  // A store is read only when its switch is on, so only then must the file be there.
  if (tls.loadTrustStore) {
    const file = storeFile(tls.trustStore, issue, 'trustStore');
    if (file !== undefined && !file.text.includes(PEM_CERTIFICATE)) {
      issue(
        ['tls', 'trustStore'],
        `${file.path} is not a PEM file of CA certificates (a Java trust store? export it with keytool -exportcert -rfc)`,
      );
    }
  }
  if (tls.loadKeyStore) {
    const file = storeFile(tls.keyStore, issue, 'keyStore');
    const parts = file && pemParts(file.text);
    if (parts && (!parts.key || !parts.cert)) {
      issue(
        ['tls', 'keyStore'],
        `${file.path} must hold a PEM private key and its certificate (a Java key store? export both as PEM)`,
      );
    }
  }
  const { token } = oauth;
  const cc = token.client_credentials;
  const at = ['oauth', 'token', 'client_credentials'];
  // Both present the certificate of the key store: without it the token server would refuse
  // every request (tls_client_auth) or issue tokens no certificate can use.
  if (!tls.loadKeyStore) {
    if (cc?.tokenBinding === 'mtls') {
      issue([...at, 'tokenBinding'], 'mtls needs tls.loadKeyStore: true (the certificate)');
    }
    if (cc?.token_endpoint_auth_method === 'tls_client_auth') {
      issue(
        [...at, 'token_endpoint_auth_method'],
        'tls_client_auth needs tls.loadKeyStore: true (the certificate)',
      );
    }
  }
  if (!oauth.multipleAuthServers) {
    if (cc && cc.client_id === undefined) issue([...at, 'client_id'], 'is required');
    return;
  }
  // multipleAuthServers: a token server and a client for every serviceId named.
  const servers = cc?.serviceIdAuthServers ?? {};
  if (Object.keys(servers).length === 0) {
    issue(
      [...at, 'serviceIdAuthServers'],
      'is required (at least one serviceId) when oauth.multipleAuthServers is true',
    );
  }
  for (const [serviceId, server] of Object.entries(servers)) {
    if (!server.server_url && !token.server_url) {
      issue(
        [...at, 'serviceIdAuthServers', serviceId, 'server_url'],
        'is required (or oauth.token.server_url)',
      );
    }
  }
  for (const [prefix, serviceId] of Object.entries(cfg.pathPrefixServices)) {
    if (!Object.prototype.hasOwnProperty.call(servers, serviceId)) {
      issue(
        ['pathPrefixServices', prefix],
        `names serviceId "${serviceId}", which has no oauth.token.client_credentials.serviceIdAuthServers entry`,
      );
    }
  }
}

/** A store file that must be there: its path and text, or an issue at its key. */
function storeFile(
  file: string | undefined,
  issue: (path: string[], message: string) => void,
  key: 'trustStore' | 'keyStore',
): { path: string; text: string } | undefined {
  if (!file) issue(['tls', key], 'is required');
  else if (!fs.existsSync(file)) issue(['tls', key], `file not found: ${file}`);
  else return { path: file, text: fs.readFileSync(file, 'utf8') };
  return undefined;
}

/** light-4j's secret.yml keys this project does not use. */
const SECRET_LIGHT4J_KEYS: Record<string, Light4jKey> = Object.fromEntries(
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
);

const secretShape = () =>
  z.strictObject({
    clientCredentialsClientSecret: text().optional(),
    authorizationCodeClientSecret: text().optional(),
    refreshTokenClientSecret: text().optional(),
    keyClientSecret: text().optional(),
    introspectionClientSecret: text().optional(),
  });

/** secret.yml: the only place client secrets come from (or light-4j's client.yml client_secret). */
export type SecretConfig = z.output<ReturnType<typeof secretShape>>;

/**
 * secret.yml: the client secrets. Its five keys only (a misspelled secret is an error, not a
 * silent "no secret"); light-4j's other secrets load with a warning. A secret written unquoted
 * as digits is the text written.
 */
export const secretConfigSchema = configFile<SecretConfig>(secretShape, {
  light4j: SECRET_LIGHT4J_KEYS,
});

/**
 * The client secrets in use: secret.yml's, else light-4j's `client_secret` of client.yml
 * (secret.yml wins when both are set).
 */
export function clientSecrets(client: ClientConfig, secret: SecretConfig): SecretConfig {
  const { token, key, introspection } = client.oauth;
  return {
    clientCredentialsClientSecret:
      secret.clientCredentialsClientSecret ?? token.client_credentials?.client_secret,
    authorizationCodeClientSecret:
      secret.authorizationCodeClientSecret ?? token.authorization_code?.client_secret,
    refreshTokenClientSecret: secret.refreshTokenClientSecret ?? token.refresh_token?.client_secret,
    keyClientSecret: secret.keyClientSecret ?? key.client_secret,
    introspectionClientSecret: secret.introspectionClientSecret ?? introspection?.client_secret,
  };
}

/** A grant of client.yml's `oauth.token`. */
export type GrantName = 'client_credentials' | 'authorization_code' | 'refresh_token';

/** client.yml and secret.yml as read, and the files they came from (for a ConfigError). */
export interface ClientFiles {
  client: ClientConfig;
  secret: SecretConfig;
  clientFile: string;
  secretFile: string;
}

/** How a client authenticates at the token endpoint. */
export type ClientAuthMethod = 'client_secret_basic' | 'tls_client_auth';

/** What one grant is asked for with. */
export interface GrantSettings {
  serverUrl: string;
  uri: string;
  clientId: string;
  /** `client_secret_basic`: the secret; `tls_client_auth`: none (the certificate). */
  authMethod: ClientAuthMethod;
  clientSecret?: string;
}

const SECRET_KEY = {
  client_credentials: 'clientCredentialsClientSecret',
  authorization_code: 'authorizationCodeClientSecret',
  refresh_token: 'refreshTokenClientSecret',
} as const;

/**
 * The rules of a grant across client.yml and secret.yml, checked when the grant is to be used
 * (light-4j's own client.yml lists grants without a `server_url`, which it finds by service
 * discovery): the grant, `oauth.token.server_url`, its client and its secret (secret.yml's, else
 * client.yml's `client_secret`). The refresh grant without a client of its own goes as the
 * authorization code's client. A missing key is a ConfigError naming the file and key; `why`
 * says what needs it.
 */
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
  if (
    grant === 'client_credentials' &&
    token.client_credentials?.token_endpoint_auth_method === 'tls_client_auth'
  ) {
    return { ...settings, authMethod: 'tls_client_auth' };
  }
  const clientSecret = clientSecrets(files.client, files.secret)[SECRET_KEY[grant]];
  if (!clientSecret) throw missing(files.secretFile, SECRET_KEY[grant]);
  return { ...settings, authMethod: 'client_secret_basic', clientSecret };
}
