import { configFile, listOf, mapOf, z, type Light4jKey } from '@chain/config';
import {
  algorithmProblem,
  DEFAULT_ALGORITHMS,
  SUPPORTED_ALGORITHMS,
  type Algorithm,
} from './algorithms';
import { certificateProblem } from './public-key';

/**
 * security.yml: light-4j's keys and defaults, plus ours (`jwt.cacheMaxEntries`,
 * `jwt.algorithms`, `jwt.keyMaxAgeSeconds`, `swt.cacheMaxEntries`, `swt.cacheMaxAgeSeconds`,
 * `dpop`). light-rest-4j's `openapi-security.yml` is read instead when a config folder has it.
 */
export interface SecurityConfig {
  enableVerifyJwt: boolean;
  /**
   * light-4j: verify opaque tokens (simple web tokens) by introspection (client.yml's
   * introspection server). With `enableVerifyJwt` too, a token that is not a JWT is introspected.
   */
  enableVerifySwt: boolean;
  /**
   * light-4j: the request headers that may carry the client id and secret to introspect with,
   * instead of client.yml's (both, or neither is used). Empty: none.
   */
  swtClientIdHeader: string;
  swtClientSecretHeader: string;
  /** Ours: the cache of introspection answers. */
  swt: {
    /** Upper bound of the cache of active answers. */
    cacheMaxEntries: number;
    /** Longest an answer is used, whatever the token's `exp`: how late a revocation is seen. */
    cacheMaxAgeSeconds: number;
  };
  enableVerifyScope: boolean;
  enableMockJwt: boolean;
  /** Verify X-Scope-Token and match its scopes (light-4j, default true). */
  enableExtractScopeToken: boolean;
  /** A request without a spec operation skips the scope check instead of ERR10007 (light-4j). */
  skipVerifyScopeWithoutSpec: boolean;
  /** Paths (whole segments) that skip verification (light-4j). */
  skipPathPrefixes: string[];
  /** claim -> request header, for the handler and the downstream (light-4j). */
  passThroughClaims: Record<string, string>;
  /**
   * light-4j: keys come from the key server only (jwt.certificate is not read); a JWKS is
   * fetched whole at start.
   */
  bootstrapFromKeyService: boolean;
  jwt: {
    /** kid -> absolute path of a PEM X.509 certificate (or public key). */
    certificate: Record<string, string>;
    clockSkewInSeconds: number;
    /** Upper bound of the verified-token cache (ours; light-4j has none). */
    cacheMaxEntries: number;
    /** Signature algorithms accepted (ours): RS256, PS256, ES256, EdDSA; default RS256. */
    algorithms: Algorithm[];
    /** light-4j: `X509Certificate` (light-oauth2, PEM by kid) or `JsonWebKeySet`. */
    keyResolver?: 'X509Certificate' | 'JsonWebKeySet';
    /** Longest a key fetched from the key server is used before it is fetched again (ours). */
    keyMaxAgeSeconds: number;
  };
  /** Sender-constrained tokens (ours; RFC 9449 DPoP): how a DPoP proof is checked. */
  dpop: {
    /** The proof algorithms accepted, and announced in the `algs` of a DPoP challenge. */
    algorithms: Algorithm[];
    /** A proof's `iat` at most this many seconds from now, either way. */
    iatWindowSeconds: number;
    /** Bound of the per-process cache of used proof `jti`s. */
    replayCacheMaxEntries: number;
    /** The service's external origins (`https://host:port`) a proof's `htu` may name; empty: the request's Host. */
    origins: string[];
  };
  logJwtToken: boolean;
  logClientUserScope: boolean;
  oauthHttp2Support: boolean;
  enableJwtCache: boolean;
}

export const DEFAULT_CERTIFICATES = { '100': 'primary.crt', '101': 'secondary.crt' };

/** Header names a claim may not be passed through as: they carry credentials or framing. */
const RESERVED_HEADERS = new Set([
  'authorization',
  'x-scope-token',
  'dpop',
  'x-scope-token-dpop',
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'cookie',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const algorithms = listOf(z.string())
  .superRefine((names, ctx) => {
    if (names.length === 0)
      ctx.addIssue({ code: 'custom', message: 'needs at least one algorithm' });
    names.forEach((name, i) => {
      const problem = algorithmProblem(name);
      if (problem) ctx.addIssue({ code: 'custom', path: [i], message: problem });
    });
  })
  .transform((names) => [...new Set(names)] as Algorithm[]);

const skipPathPrefixes = listOf(z.string()).superRefine((prefixes, ctx) => {
  prefixes.forEach((prefix, i) => {
    if (!prefix.startsWith('/')) {
      ctx.addIssue({ code: 'custom', path: [i], message: 'a path prefix starts with /' });
    } else if (prefix.replace(/\/+$/, '') === '') {
      ctx.addIssue({
        code: 'custom',
        path: [i],
        message: 'would skip verification of every path; set enableVerifyJwt: false instead',
      });
    }
  });
});

const passThroughClaims = mapOf(z.string()).superRefine((mapping, ctx) => {
  for (const [claim, header] of Object.entries(mapping)) {
    if (!HEADER_NAME.test(header)) {
      ctx.addIssue({ code: 'custom', path: [claim], message: 'is not a valid header name' });
    } else if (RESERVED_HEADERS.has(header.toLowerCase())) {
      ctx.addIssue({
        code: 'custom',
        path: [claim],
        message: `${header} carries credentials or framing and cannot take a claim`,
      });
    }
  }
});

/** A header a request may carry the introspection client in: a valid name, free, or '' (none). */
const swtHeader = z
  .string()
  .refine((name) => name === '' || HEADER_NAME.test(name), 'is not a valid header name')
  .refine(
    (name) => !RESERVED_HEADERS.has(name.toLowerCase()),
    'carries credentials or framing and cannot carry the introspection client',
  );

/** The algorithms a DPoP proof may use by default: every one supported, EC first. */
export const DEFAULT_DPOP_ALGORITHMS: readonly Algorithm[] = ['ES256', 'EdDSA', 'PS256', 'RS256'];

/**
 * An origin as `dpop.origins` holds it: `http(s)://host[:port]`, nothing after it; kept in the
 * form `htu` is compared in (lower case, no default port).
 */
const origins = listOf(z.string())
  .superRefine((values, ctx) => {
    values.forEach((value, i) => {
      if (originOf(value) === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: 'is not an origin: http(s)://host[:port], without a path, query or user info',
        });
      }
    });
  })
  .transform((values) => values.map((value) => originOf(value)!));

function originOf(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const bare =
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    !url.username &&
    !url.password &&
    url.pathname === '/' &&
    !/[?#]/.test(value);
  return bare ? `${url.protocol}//${url.host}` : undefined;
}

/** light-4j's security.yml keys this project does not implement. */
const LIGHT4J_KEYS: Record<string, Light4jKey> = {
  ignoreJwtExpiry: { same: false, note: 'the expiry is always checked' },
  enableH2c: { same: false },
  enableRelaxedKeyValidation: { same: false, note: 'keys are always checked in full' },
  jwtCacheFullSize: { note: 'jwt.cacheMaxEntries bounds the verified-token cache' },
  providerId: { note: 'federated light-oauth2 key ids are not split here' },
};

export const securityConfigSchema = configFile<SecurityConfig>(
  ({ path }) =>
    z
      .strictObject({
        enableVerifyJwt: z.boolean().default(false),
        enableVerifySwt: z.boolean().default(false),
        swtClientIdHeader: swtHeader.default('swt-client'),
        swtClientSecretHeader: swtHeader.default('swt-secret'),
        swt: z
          .strictObject({
            cacheMaxEntries: z.number().int().min(0).default(10000),
            cacheMaxAgeSeconds: z.number().int().min(0).default(60),
          })
          .prefault({}),
        enableVerifyScope: z.boolean().default(true),
        enableMockJwt: z.boolean().default(false),
        enableExtractScopeToken: z.boolean().default(true),
        skipVerifyScopeWithoutSpec: z.boolean().default(false),
        skipPathPrefixes: skipPathPrefixes.default([]),
        passThroughClaims: passThroughClaims.default({}),
        bootstrapFromKeyService: z.boolean().default(false),
        jwt: z
          .strictObject({
            certificate: mapOf(path()).prefault(DEFAULT_CERTIFICATES),
            clockSkewInSeconds: z.number().int().min(0).default(60),
            cacheMaxEntries: z.number().int().min(0).default(10000),
            algorithms: algorithms.default([...DEFAULT_ALGORITHMS]),
            keyResolver: z.enum(['X509Certificate', 'JsonWebKeySet']).optional(),
            keyMaxAgeSeconds: z.number().int().min(1).default(600),
          })
          .prefault({}),
        dpop: z
          .strictObject({
            algorithms: algorithms.default([...DEFAULT_DPOP_ALGORITHMS]),
            iatWindowSeconds: z.number().int().min(1).default(60),
            replayCacheMaxEntries: z.number().int().min(1).default(100000),
            origins: origins.default([]),
          })
          .prefault({}),
        logJwtToken: z.boolean().default(true),
        logClientUserScope: z.boolean().default(false),
        oauthHttp2Support: z.boolean().default(true),
        enableJwtCache: z.boolean().default(true),
      })
      .superRefine((cfg, ctx) => {
        const { swtClientIdHeader: id, swtClientSecretHeader: secret } = cfg;
        if (id !== '' && id.toLowerCase() === secret.toLowerCase()) {
          ctx.addIssue({
            code: 'custom',
            path: ['swtClientSecretHeader'],
            message: 'must differ from swtClientIdHeader',
          });
        }
        // Certificates are read, and so checked, only when verification is on and they are
        // not taken from the key server instead.
        if (!cfg.enableVerifyJwt || cfg.bootstrapFromKeyService) return;
        for (const [kid, file] of Object.entries(cfg.jwt.certificate)) {
          const problem = certificateProblem(file, cfg.jwt.algorithms);
          if (problem) {
            ctx.addIssue({ code: 'custom', path: ['jwt', 'certificate', kid], message: problem });
          }
        }
      }),
  {
    light4j: LIGHT4J_KEYS,
    // light-rest-4j's openapi-security.yml name of enableExtractScopeToken.
    aliases: { enableVerifyJWTScopeToken: 'enableExtractScopeToken' },
  },
);

export { SUPPORTED_ALGORITHMS };
