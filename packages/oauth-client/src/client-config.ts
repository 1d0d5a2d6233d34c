import fs from 'node:fs';
import { configFile, listOf, text, z, type Light4jKey } from '@chain/config';

/**
 * client.yml: light-4j's keys that this project implements (the key server section also under
 * light-4j's newer name `oauth.token.key`), plus `request.timeout`, `oauth.key.jwk` and
 * `oauth.key.issuer` (ours).
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
    /** Time-out of one downstream call, in milliseconds. */
    timeout: number;
  };
  oauth: {
    token: {
      server_url?: string;
      serviceId?: string;
      tokenRenewBeforeExpired: number;
      expiredRefreshRetryDelay: number;
      earlyRefreshRetryDelay: number;
      authorization_code?: GrantConfig & { redirect_uri?: string };
      client_credentials?: GrantConfig;
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

/** secret.yml: the only place client secrets come from. */
export interface SecretConfig {
  clientCredentialsClientSecret?: string;
  authorizationCodeClientSecret?: string;
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
  'oauth.multipleAuthServers': { same: false, note: 'one token and key server per service' },
  'oauth.token.cache': notHere('tokens are cached per client and scope set'),
  'oauth.token.proxyHost': notHere('no proxy'),
  'oauth.token.proxyPort': notHere('no proxy'),
  'oauth.token.enableHttp2': notHere('the token client speaks HTTP/1.1'),
  'oauth.token.client_credentials.serviceIdAuthServers': notHere('one token server per service'),
  'oauth.token.refresh_token': notHere('the refresh token grant is not used here'),
  'oauth.token.token_exchange': notHere('the token exchange grant is not used here'),
  'oauth.token.key.proxyHost': notHere('no proxy'),
  'oauth.token.key.proxyPort': notHere('no proxy'),
  'oauth.token.key.enableHttp2': notHere('the key client speaks HTTP/1.1'),
  'oauth.token.key.serviceIdAuthServers': notHere('one key server per service'),
  'oauth.key.enableHttp2': notHere('the key client speaks HTTP/1.1'),
  'oauth.sign': notHere('no signing service here'),
  'oauth.deref': notHere('no reference tokens here'),
  pathPrefixServices: notHere('one token and key server per service'),
  'request.errorThreshold': notHere('no circuit breaker; request.timeout bounds each call'),
  'request.connectTimeout': notHere('request.timeout bounds the whole call'),
  'request.resetTimeout': notHere('no circuit breaker'),
  'request.injectOpenTracing': { same: false },
  'request.injectCallerId': { same: false },
  'request.enableHttp2': notHere('downstream calls speak HTTP/1.1'),
  'request.connectionPoolSize': notHere('one keep-alive agent per service'),
  'request.connectionExpireTime': notHere('one keep-alive agent per service'),
  'request.maxReqPerConn': notHere('one keep-alive agent per service'),
  'request.maxConnectionNumPerHost': notHere('one keep-alive agent per service'),
  'request.minConnectionNumPerHost': notHere('one keep-alive agent per service'),
  'request.maxRequestRetry': notHere('a downstream call is not retried'),
  'request.requestRetryDelay': notHere('a downstream call is not retried'),
  'request.poolMetricsEnabled': { same: false },
  'request.poolWarmUpEnabled': { same: false },
  'request.poolWarmUpSize': notHere('no pool warm-up'),
  'request.healthCheckEnabled': notHere('no connection health checks'),
  'request.healthCheckIntervalMs': notHere('no connection health checks'),
};

const PEM_CERTIFICATE = '-----BEGIN CERTIFICATE-----';

export const clientConfigSchema = configFile<ClientConfig>(
  ({ path }) =>
    z
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
          .strictObject({ timeout: z.number().int().positive().default(3000) })
          .prefault({}),
        oauth: z
          .strictObject({
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
                client_credentials: grant.optional(),
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
      }),
  {
    light4j: LIGHT4J_KEYS,
    // light-4j moved the key server section under oauth.token; both names are read.
    aliases: { 'oauth.token.key': 'oauth.key' },
  },
);

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
 * secret.yml: the client secrets. Its three keys only (a misspelled secret is an error, not a
 * silent "no secret"); light-4j's other secrets load with a warning. A secret written unquoted
 * as digits is the text written.
 */
export const secretConfigSchema = configFile<SecretConfig>(
  () =>
    z.strictObject({
      clientCredentialsClientSecret: text().optional(),
      authorizationCodeClientSecret: text().optional(),
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
    keyClientSecret: secret.keyClientSecret ?? key.client_secret,
  };
}
