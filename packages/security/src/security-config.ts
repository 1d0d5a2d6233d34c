import {
  configFile,
  listOf,
  mapOf,
  readConfigFile,
  redisUrl,
  text,
  z,
  type SchemaHelpers,
} from '@chain/config';
import { algorithmProblem, DEFAULT_ALGORITHMS, type Algorithm } from './algorithms.js';
import { verificationKey, type VerificationKey } from './public-key.js';

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

const algorithms = listOf(
  z.string().superRefine((name, ctx) => {
    const problem = algorithmProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
)
  .refine((names) => names.length > 0, 'needs at least one algorithm')
  .transform((names) => [...new Set(names)] as Algorithm[]);

const pathPrefix = z.string().refine((p) => p.startsWith('/'), 'a path prefix starts with /');

const skipPathPrefixes = listOf(
  pathPrefix.refine(
    (prefix) => prefix.replace(/\/+$/, '') !== '',
    'would skip verification of every path; set enableVerifyJwt: false instead',
  ),
);

const passThroughClaims = mapOf(
  z.string().superRefine((header, ctx) => {
    if (!HEADER_NAME.test(header)) {
      ctx.addIssue({ code: 'custom', message: 'is not a valid header name' });
    } else if (RESERVED_HEADERS.has(header.toLowerCase())) {
      const message = `${header} carries credentials or framing and cannot take a claim`;
      ctx.addIssue({ code: 'custom', message });
    }
  }),
);

const swtHeader = z
  .string()
  .refine((name) => name === '' || HEADER_NAME.test(name), 'is not a valid header name')
  .refine(
    (name) => !RESERVED_HEADERS.has(name.toLowerCase()),
    'carries credentials or framing and cannot carry the introspection client',
  );

// Kept as `htu` is compared: lower case, no default port.
const origins = listOf(
  z.string().transform((value, ctx) => {
    const url = URL.parse(value);
    // Only the origin: no user info, path, query or fragment, not even an empty one.
    if (url && /^https?:$/.test(url.protocol) && url.href === `${url.origin}/`) return url.origin;
    ctx.addIssue({
      code: 'custom',
      message: 'is not an origin: http(s)://host[:port], without a path, query or user info',
    });
    return value;
  }),
);

/** One issuer of `jwt.issuers`: its audience, its keys, and where its tokens are accepted. */
const issuerShape = (path: SchemaHelpers['path']) =>
  z
    .strictObject({
      audience: listOf(z.string().min(1)).optional(),
      certificate: mapOf(path()).default({}),
      // client.yml `oauth.key`'s keys, for this issuer's key server.
      key: z
        .strictObject({
          server_url: z.url({ protocol: /^https?$/ }),
          uri: z.string().startsWith('/').default('/oauth2/key'),
          jwk: z.boolean().default(false),
          client_id: text().optional(),
          client_secret: text().optional(),
        })
        .optional(),
      pathPrefixes: listOf(pathPrefix).optional(),
    })
    .refine((i) => i.key !== undefined || Object.keys(i.certificate).length > 0, {
      message: 'names no certificate and no key server: no token of this issuer could verify',
    });

type IssuerConfig = z.output<ReturnType<typeof issuerShape>> & {
  /** `certificate`'s keys, read at start. */
  certificates?: ReadonlyMap<string, VerificationKey>;
};

function securityShape({ path }: SchemaHelpers) {
  return z.strictObject({
    enableVerifyJwt: z.boolean().default(false),
    enableVerifySwt: z.boolean().default(false),
    swtClientIdHeader: swtHeader.default('swt-client'),
    swtClientSecretHeader: swtHeader.default('swt-secret'),
    swt: z
      .strictObject({
        cacheMaxEntries: z.number().int().min(0).default(10000),
        cacheMaxAgeSeconds: z.number().int().min(0).default(60),
        requireTokenType: z.boolean().default(true),
      })
      .prefault({}),
    enableVerifyScope: z.boolean().default(true),
    enableMockJwt: z.boolean().default(false),
    enableExtractScopeToken: z.boolean().default(true),
    skipVerifyScopeWithoutSpec: z.boolean().default(false),
    skipPathPrefixes: skipPathPrefixes.default([]),
    passThroughClaims: passThroughClaims.default({}),
    // RFC 8693 4.1: the `act` chains accepted, each nearest actor first ("api-c api-b").
    actorPaths: listOf(z.string().regex(/\S/, 'names at least one actor')).default([]),
    bootstrapFromKeyService: z.boolean().default(false),
    jwt: z
      .strictObject({
        certificate: mapOf(path()).prefault({ '100': 'primary.crt', '101': 'secondary.crt' }),
        clockSkewInSeconds: z.number().int().min(0).default(60),
        cacheMaxEntries: z.number().int().min(0).default(10000),
        algorithms: algorithms.default([...DEFAULT_ALGORITHMS]),
        keyResolver: z.enum(['X509Certificate', 'JsonWebKeySet']).optional(),
        keyMaxAgeSeconds: z.number().int().min(1).default(600),
        strict: z.boolean().default(false),
        maxTokenAgeSeconds: z.number().int().min(1).optional(),
        issuers: z.record(z.string().min(1), issuerShape(path)).default({}),
      })
      .prefault({}),
    dpop: z
      .strictObject({
        algorithms: algorithms.default(['ES256', 'EdDSA', 'PS256', 'RS256']),
        iatWindowSeconds: z.number().int().min(1).default(60),
        replayCacheMaxEntries: z.number().int().min(1).default(100000),
        origins: origins.default([]),
        /** A Redis URL: the replay cache shared by every process that names it. */
        redis: redisUrl().optional(),
      })
      .prefault({}),
    resourceMetadata: z
      .strictObject({
        enabled: z.boolean().default(false),
        resource: z
          .url({ protocol: /^https$/ })
          .refine((u) => !u.includes('#'), 'has no fragment')
          .optional(),
        authorizationServers: listOf(z.url({ protocol: /^https$/ })).optional(),
      })
      .prefault({}),
    logJwtToken: z.boolean().default(true),
    logClientUserScope: z.boolean().default(false),
    oauthHttp2Support: z.boolean().default(true),
    enableJwtCache: z.boolean().default(true),
  });
}

type SecurityShape = z.output<ReturnType<typeof securityShape>>;
export type SecurityConfig = Omit<SecurityShape, 'jwt'> & {
  jwt: Omit<SecurityShape['jwt'], 'issuers'> & { issuers: Record<string, IssuerConfig> };
  /** `jwt.certificate`'s keys, read when verification is on and keys are not from the key server. */
  certificates?: ReadonlyMap<string, VerificationKey>;
};

/** What this schema made: a verifier takes it as it is. */
const checked = new WeakSet<object>();
export const isCheckedConfig = (value: object): value is SecurityConfig => checked.has(value);
const made = <T extends object>(config: T): T => (checked.add(config), config);

export const securityConfigSchema = configFile<SecurityConfig>(
  (helpers) =>
    securityShape(helpers).transform((cfg, ctx) => {
      const refuse = (path: string[], message: string) =>
        ctx.addIssue({ code: 'custom', path, message });
      const { swtClientIdHeader: id, swtClientSecretHeader: secret } = cfg;
      if (id !== '' && id.toLowerCase() === secret.toLowerCase()) {
        refuse(['swtClientSecretHeader'], 'must differ from swtClientIdHeader');
      }
      if (cfg.resourceMetadata.enabled && !cfg.enableVerifyJwt && !cfg.enableVerifySwt) {
        const why = 'needs enableVerifyJwt or enableVerifySwt (a service that verifies no token)';
        refuse(['resourceMetadata', 'enabled'], why);
      }
      if (!cfg.enableVerifyJwt) return made(cfg);
      const read = (at: string[], files: Record<string, string>) =>
        readCertificates(ctx, at, files, cfg.jwt.algorithms);
      const issuers = Object.entries(cfg.jwt.issuers);
      if (issuers.length > 0) {
        const withKeys = issuers.map(([iss, entry]) => {
          const certificates = read(['jwt', 'issuers', iss, 'certificate'], entry.certificate);
          return [iss, { ...entry, certificates }];
        });
        return made({ ...cfg, jwt: { ...cfg.jwt, issuers: Object.fromEntries(withKeys) } });
      }
      if (cfg.bootstrapFromKeyService) return made(cfg);
      return made({ ...cfg, certificates: read(['jwt', 'certificate'], cfg.jwt.certificate) });
    }),
  {
    light4j: {
      ignoreJwtExpiry: { same: false, note: 'the expiry is always checked' },
      enableH2c: { same: false },
      enableRelaxedKeyValidation: { same: false, note: 'keys are always checked in full' },
      jwtCacheFullSize: { note: 'jwt.cacheMaxEntries bounds the verified-token cache' },
      providerId: { note: 'federated light-oauth2 key ids are not split here' },
    },
    // light-rest-4j's openapi-security.yml name of enableExtractScopeToken.
    aliases: { enableVerifyJWTScopeToken: 'enableExtractScopeToken' },
  },
);

/** kid -> file, each read as the key of its kid. */
function readCertificates(
  ctx: z.RefinementCtx,
  at: string[],
  files: Record<string, string>,
  algorithms: readonly Algorithm[],
): Map<string, VerificationKey> {
  const certificates = new Map<string, VerificationKey>();
  for (const [kid, file] of Object.entries(files)) {
    const key = readConfigFile(ctx, [...at, kid], file, (pem) => {
      try {
        return verificationKey(pem, algorithms);
      } catch (err) {
        const holds =
          err instanceof TypeError ? err.message : 'not a PEM certificate or public key';
        throw new Error(`${file} holds ${holds}`, { cause: err });
      }
    });
    if (key) certificates.set(kid, key);
  }
  return certificates;
}
