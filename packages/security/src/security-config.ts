import fs from 'node:fs';
import { z, type SchemaFactory } from '@chain/config';

/** security.yml, light-4j's keys and defaults (docs/configuration.md). */
export interface SecurityConfig {
  enableVerifyJwt: boolean;
  enableVerifyScope: boolean;
  enableMockJwt: boolean;
  jwt: {
    /** kid -> absolute path of a PEM X.509 certificate. */
    certificate: Record<string, string>;
    clockSkewInSeconds: number;
    /** Upper bound of the verified-token cache (ours; light-4j has none). */
    cacheMaxEntries: number;
  };
  logJwtToken: boolean;
  logClientUserScope: boolean;
  oauthHttp2Support: boolean;
  enableJwtCache: boolean;
}

export const DEFAULT_CERTIFICATES = { '100': 'primary.crt', '101': 'secondary.crt' };

export const securityConfigSchema: SchemaFactory<SecurityConfig> = ({ path }) =>
  z
    .strictObject({
      enableVerifyJwt: z.boolean().default(false),
      enableVerifyScope: z.boolean().default(true),
      enableMockJwt: z.boolean().default(false),
      jwt: z
        .strictObject({
          certificate: z.record(z.string(), path()).prefault(DEFAULT_CERTIFICATES),
          clockSkewInSeconds: z.number().int().min(0).default(60),
          cacheMaxEntries: z.number().int().min(0).default(10000),
        })
        .prefault({}),
      logJwtToken: z.boolean().default(true),
      logClientUserScope: z.boolean().default(false),
      oauthHttp2Support: z.boolean().default(true),
      enableJwtCache: z.boolean().default(true),
    })
    .superRefine((cfg, ctx) => {
      // Certificates are needed, and so checked, only when verification is on.
      if (!cfg.enableVerifyJwt) return;
      for (const [kid, file] of Object.entries(cfg.jwt.certificate)) {
        if (!fs.existsSync(file)) {
          ctx.addIssue({
            code: 'custom',
            path: ['jwt', 'certificate', kid],
            message: `file not found: ${file}`,
          });
        }
      }
    });
