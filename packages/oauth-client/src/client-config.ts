import fs from 'node:fs';
import { z, type SchemaFactory } from '@chain/config';

/** client.yml: light-4j's keys, plus `request.timeout` (ours); docs/configuration.md. */
export interface ClientConfig {
  tls: {
    verifyHostname: boolean;
    loadTrustStore: boolean;
    /** PEM file of trusted CA certificates (absolute path). */
    trustStore?: string;
    loadKeyStore: boolean;
    /** PEM file holding the client's private key and certificate, for two-way TLS. */
    keyStore?: string;
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
      /** The key server publishes a JWKS at `{server_url}{uri}` instead of PEM per kid. */
      jwk: boolean;
    };
  };
}

export interface GrantConfig {
  uri: string;
  client_id: string;
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
const grant = z.strictObject({ uri: z.string().startsWith('/'), client_id: z.string(), scope });

export const clientConfigSchema: SchemaFactory<ClientConfig> = ({ path }) =>
  z
    .strictObject({
      tls: z
        .strictObject({
          verifyHostname: z.boolean().default(true),
          loadTrustStore: z.boolean().default(true),
          trustStore: path().optional(),
          loadKeyStore: z.boolean().default(false),
          keyStore: path().optional(),
        })
        .prefault({}),
      request: z.strictObject({ timeout: z.number().int().positive().default(3000) }).prefault({}),
      oauth: z
        .strictObject({
          token: z
            .strictObject({
              server_url: url().optional(),
              serviceId: z.string().optional(),
              tokenRenewBeforeExpired: z.number().int().min(0).default(60000),
              expiredRefreshRetryDelay: z.number().int().min(0).default(2000),
              earlyRefreshRetryDelay: z.number().int().min(0).default(4000),
              authorization_code: grant.extend({ redirect_uri: z.string().optional() }).optional(),
              client_credentials: grant.optional(),
            })
            .prefault({}),
          key: z
            .strictObject({
              server_url: url().optional(),
              serviceId: z.string().optional(),
              uri: z.string().startsWith('/').default('/oauth2/key'),
              client_id: z.string().optional(),
              jwk: z.boolean().default(false),
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
          ctx.addIssue({ code: 'custom', path: ['tls', key], message: `file not found: ${file}` });
        }
      };
      need(cfg.tls.loadTrustStore, cfg.tls.trustStore, 'trustStore');
      need(cfg.tls.loadKeyStore, cfg.tls.keyStore, 'keyStore');
    });

export const secretConfigSchema: SchemaFactory<SecretConfig> = () =>
  z.looseObject({
    clientCredentialsClientSecret: z.string().optional(),
    authorizationCodeClientSecret: z.string().optional(),
    keyClientSecret: z.string().optional(),
  });
