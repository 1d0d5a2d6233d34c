import fs from 'node:fs';
import { configFile, listOf, mapOf, text, z, type Light4jKey } from '@chain/config';

/**
 * client.yml: light-4j's keys that this project implements (the key server section also under
 * light-4j's newer name `oauth.token.key`), plus `oauth.key.jwk` and `oauth.key.issuer` (ours).
 */
export interface ClientConfig {
  tls: {
    verifyHostname: boolean;
    /** Trust the system's CA certificates too (light-4j; default false here). */
    loadDefaultTrustStore: boolean;
    loadTrustStore: boolean;
    /** PEM file of trusted CA certificates (absolute path). */
    trustStore?: string;
    loadKeyStore: boolean;
    /** PEM file holding the client's private key and certificate, for two-way TLS. */
    keyStore?: string;
    /** Lowest TLS version spoken (light-4j's `tlsVersion`). */
    tlsVersion?: 'TLSv1.2' | 'TLSv1.3';
  };
  request: {
    /** Time-out of one whole downstream call (connect, answer and body), in milliseconds. */
    timeout: number;
    /** Time-out of opening a connection (TCP and TLS handshake), in milliseconds. */
    connectTimeout: number;
    /** Failures in a row that open a downstream's circuit; 0 turns the breaker off. */
    errorThreshold: number;
    /** How long an open circuit fails calls at once before one trial call, in milliseconds. */
    resetTimeout: number;
    /**
     * light-4j: call downstream services over HTTP/2 when they offer it (ALPN). Off by default:
     * HTTP/1.1 keep-alive answered more requests per second between hops (docs/benchmarks.md).
     */
    enableHttp2: boolean;
    /**
     * The HTTP/1.1 client of downstream calls: `undici` (its keep-alive pools; less CPU per call
     * in the bench, docs/benchmarks.md) or `node` (node:https and its keep-alive agent).
     */
    http1Client: 'undici' | 'node';
  };
  /** Path prefix of a downstream call -> the serviceId whose auth server gives its token. */
  pathPrefixServices: Record<string, string>;
  oauth: {
    /** Tokens of different downstreams come from different auth servers (serviceIdAuthServers). */
    multipleAuthServers: boolean;
    token: {
      server_url?: string;
      serviceId?: string;
      tokenRenewBeforeExpired: number;
      expiredRefreshRetryDelay: number;
      earlyRefreshRetryDelay: number;
      authorization_code?: GrantConfig & { redirect_uri?: string };
      client_credentials?: Omit<GrantConfig, 'client_id'> & {
        /** Required unless `multipleAuthServers` is true. */
        client_id?: string;
        /** serviceId -> its auth server and client (with `multipleAuthServers: true`). */
        serviceIdAuthServers?: Record<string, AuthServerConfig>;
      };
      /** The refresh grant; its client is authorization_code's when it names none. */
      refresh_token?: Omit<GrantConfig, 'client_id'> & { client_id?: string };
    };
    key: {
      server_url?: string;
      serviceId?: string;
      uri: string;
      client_id?: string;
      /** light-4j; secret.yml `keyClientSecret` wins when both are set. */
      client_secret?: string;
      /** The key server publishes a JWKS at `{server_url}{uri}` instead of PEM per kid. */
      jwk: boolean;
      /** light-4j: a token's `aud` must hold one of these. */
      audience?: string[];
      /** Ours: a token's `iss` must be one of these. */
      issuer?: string[];
    };
  };
}

export interface GrantConfig {
  uri: string;
  client_id: string;
  /** light-4j; secret.yml wins when both are set. */
  client_secret?: string;
  scope?: string[];
}

/**
 * light-4j's AuthServerConfig: the token server and client of one downstream serviceId. Unset
 * `server_url` and `uri` are those of `oauth.token` and its `client_credentials`.
 */
export interface AuthServerConfig {
  server_url?: string;
  uri?: string;
  client_id: string;
  client_secret: string;
  scope?: string[];
}

/** secret.yml: the only place client secrets come from. */
export interface SecretConfig {
  clientCredentialsClientSecret?: string;
  authorizationCodeClientSecret?: string;
  refreshTokenClientSecret?: string;
  keyClientSecret?: string;
}

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
  'oauth.token.enableHttp2': notHere('the token client speaks HTTP/1.1'),
  'oauth.token.token_exchange': notHere('the token exchange grant is not used here'),
  'oauth.token.key.proxyHost': notHere('no proxy'),
  'oauth.token.key.proxyPort': notHere('no proxy'),
  'oauth.token.key.enableHttp2': notHere('the key client speaks HTTP/1.1'),
  'oauth.token.key.serviceIdAuthServers': notHere(
    'one key server per service; the certificates of other token servers go in security.yml jwt.certificate',
  ),
  'oauth.key.enableHttp2': notHere('the key client speaks HTTP/1.1'),
  'oauth.sign': notHere('no signing service here'),
  'oauth.deref': notHere('no reference tokens here'),
  'request.injectOpenTracing': { same: false },
  'request.injectCallerId': { same: false },
  'request.connectionPoolSize': notHere('one keep-alive agent per service'),
  'request.connectionExpireTime': notHere('one keep-alive agent per service'),
  'request.maxReqPerConn': notHere('one keep-alive agent per service'),
  'request.maxConnectionNumPerHost': notHere('one keep-alive agent per service'),
  'request.minConnectionNumPerHost': notHere('one keep-alive agent per service'),
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
  enableHttp2: 'the token client speaks HTTP/1.1',
  serviceId: 'server_url is used; no service discovery',
  audience: 'audience is checked by the service that verifies the token',
  tokenRenewBeforeExpired: 'oauth.token.tokenRenewBeforeExpired applies to every token',
  expiredRefreshRetryDelay: 'oauth.token.expiredRefreshRetryDelay applies to every token',
  earlyRefreshRetryDelay: 'oauth.token.earlyRefreshRetryDelay applies to every token',
};

export const clientConfigSchema = configFile<ClientConfig>(
  ({ path, warn }) => {
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
    return z
      .strictObject({
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
            http1Client: z.enum(['undici', 'node']).default('undici'),
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
                authorization_code: grant
                  .extend({ redirect_uri: z.string().optional(), scope })
                  .optional(),
                client_credentials: grant
                  .extend({
                    // Unused with multipleAuthServers: only the entries below are used then.
                    client_id: text().optional(),
                    serviceIdAuthServers,
                  })
                  .optional(),
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
                client_secret: text().optional(),
                jwk: z.boolean().default(false),
                audience: oneOrMore,
                issuer: oneOrMore,
              })
              .prefault({}),
          })
          .prefault({}),
      })
      .superRefine((cfg, ctx) => {
        // A store is read only when its switch is on, so only then must the file exist.
        const need = (on: boolean, file: string | undefined, key: 'trustStore' | 'keyStore') => {
          if (!on) return;
          if (!file) {
            ctx.addIssue({ code: 'custom', path: ['tls', key], message: 'is required' });
          } else if (!fs.existsSync(file)) {
            ctx.addIssue({
              code: 'custom',
              path: ['tls', key],
              message: `file not found: ${file}`,
            });
          } else if (
            key === 'trustStore' &&
            !fs.readFileSync(file, 'utf8').includes(PEM_CERTIFICATE)
          ) {
            ctx.addIssue({
              code: 'custom',
              path: ['tls', key],
              message: `${file} is not a PEM file of CA certificates (a Java trust store? export it with keytool -exportcert -rfc)`,
            });
          }
        };
        need(cfg.tls.loadTrustStore, cfg.tls.trustStore, 'trustStore');
        need(cfg.tls.loadKeyStore, cfg.tls.keyStore, 'keyStore');
        checkAuthServers(cfg, ctx);
      });
  },
  {
    light4j: LIGHT4J_KEYS,
    // light-4j moved the key server section under oauth.token; both names are read.
    aliases: { 'oauth.token.key': 'oauth.key' },
  },
);

/**
 * multipleAuthServers: the serviceIdAuthServers entries must be there, each with a token server
 * (its own `server_url` or `oauth.token.server_url`), and every serviceId of pathPrefixServices
 * must have one. Without it, client_credentials needs its client_id.
 */
function checkAuthServers(cfg: ClientConfig, ctx: z.RefinementCtx): void {
  const { token } = cfg.oauth;
  const cc = token.client_credentials;
  const at = ['oauth', 'token', 'client_credentials'];
  if (!cfg.oauth.multipleAuthServers) {
    if (cc && cc.client_id === undefined) {
      ctx.addIssue({ code: 'custom', path: [...at, 'client_id'], message: 'is required' });
    }
    return;
  }
  const servers = cc?.serviceIdAuthServers ?? {};
  if (Object.keys(servers).length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: [...at, 'serviceIdAuthServers'],
      message: 'is required (at least one serviceId) when oauth.multipleAuthServers is true',
    });
  }
  for (const [serviceId, server] of Object.entries(servers)) {
    if (!server.server_url && !token.server_url) {
      ctx.addIssue({
        code: 'custom',
        path: [...at, 'serviceIdAuthServers', serviceId, 'server_url'],
        message: 'is required (or oauth.token.server_url)',
      });
    }
  }
  for (const [prefix, serviceId] of Object.entries(cfg.pathPrefixServices)) {
    if (!Object.prototype.hasOwnProperty.call(servers, serviceId)) {
      ctx.addIssue({
        code: 'custom',
        path: ['pathPrefixServices', prefix],
        message: `names serviceId "${serviceId}", which has no oauth.token.client_credentials.serviceIdAuthServers entry`,
      });
    }
  }
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

/**
 * secret.yml: the client secrets. Its four keys only (a misspelled secret is an error, not a
 * silent "no secret"); light-4j's other secrets load with a warning. A secret written unquoted
 * as digits is the text written.
 */
export const secretConfigSchema = configFile<SecretConfig>(
  () =>
    z.strictObject({
      clientCredentialsClientSecret: text().optional(),
      authorizationCodeClientSecret: text().optional(),
      refreshTokenClientSecret: text().optional(),
      keyClientSecret: text().optional(),
    }),
  { light4j: SECRET_LIGHT4J_KEYS },
);

/**
 * The client secrets in use: secret.yml's, else light-4j's `client_secret` of client.yml
 * (secret.yml wins when both are set).
 */
export function clientSecrets(client: ClientConfig, secret: SecretConfig): SecretConfig {
  const { token, key } = client.oauth;
  return {
    clientCredentialsClientSecret:
      secret.clientCredentialsClientSecret ?? token.client_credentials?.client_secret,
    authorizationCodeClientSecret:
      secret.authorizationCodeClientSecret ?? token.authorization_code?.client_secret,
    refreshTokenClientSecret: secret.refreshTokenClientSecret ?? token.refresh_token?.client_secret,
    keyClientSecret: secret.keyClientSecret ?? key.client_secret,
  };
}
