import { createAuthorizer, type Authorizer, type TokenVerifier } from './authorizer';
import type { ClaimChecks } from './claims';
import { systemClock, type Clock } from './clock';
import { createDpopProofVerifier } from './dpop-proof';
import { DpopReplayCache } from './dpop-replay-cache';
import { createIntrospectionVerifier, type IntrospectionVerifier } from './introspection';
import { IntrospectionCache } from './introspection-cache';
import type { IntrospectionSource } from './introspection-source';
import { createJwtVerifier, type JwtVerifier, type VerifiedToken } from './jwt-verifier';
import type { KeyPolicy } from './key-policy';
import type { KeyEvents, KeySource } from './key-source';
import { KeyStore } from './key-store';
import { assertMockJwtAllowed, MockTokenIssuer } from './mock-jwt';
import { loadCertificates, verificationKey, type VerificationKey } from './public-key';
import type { SecurityConfig } from './security-config';
import { createTokenBinding, type TokenBindingCheck } from './token-binding';
import { TokenCache } from './token-cache';

export interface SecurityOptions {
  config: SecurityConfig;
  /** Keys of unknown kids (the key distribution server of client.yml `oauth.key`). */
  keySource?: KeySource;
  keyPolicy?: Partial<KeyPolicy>;
  /** Audience and issuer checks (client.yml `oauth.key.audience` / `issuer`). */
  claims?: ClaimChecks;
  now?: Clock;
  /** Environment for the production check of `enableMockJwt` (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Where the key store reports keys fetched, retired, and look-ups that failed. */
  events?: KeyEvents;
  /**
   * Where opaque tokens are introspected (client.yml's introspection server): with security.yml
   * `enableVerifySwt`. Required when `enableVerifyJwt` is false; without it, with
   * `enableVerifyJwt`, only JWTs verify.
   */
  introspection?: IntrospectionSource;
}

export interface Security {
  /** Undefined when `enableVerifyJwt` and `enableVerifySwt` are false: every request passes. */
  authorize?: Authorizer;
  /** The `enableMockJwt` token issuer. */
  mockIssuer?: MockTokenIssuer;
}

/**
 * Builds everything security.yml asks for, once, at start: certificates parsed into keys, the
 * key store with its policy, the token cache, the verifiers (JWT, introspection), the binding
 * check of tokens with a `cnf`, JWT or introspected (with its DPoP proof verifier and replay
 * cache) and the mock issuer. A bad option throws a ConfigError naming security.yml and the key.
 */
export function createSecurity(options: SecurityOptions): Security {
  const { config, claims } = options;
  const now = options.now ?? systemClock;
  assertMockJwtAllowed(config.enableMockJwt, options.env ?? process.env);
  const mockIssuer = config.enableMockJwt
    ? new MockTokenIssuer(now, 600, {
        issuer: claims?.issuer?.[0],
        audience: claims?.audience?.[0],
      })
    : undefined;
  if (!config.enableVerifyJwt && !config.enableVerifySwt) return { mockIssuer };

  const swt = introspectionVerifier(options, now);
  if (!config.enableVerifyJwt && !swt) {
    throw new TypeError(
      'security.yml enableVerifySwt without enableVerifyJwt needs an introspection source',
    );
  }
  const jwt = config.enableVerifyJwt ? jwtVerifier(options, now, mockIssuer) : undefined;
  const authorize = createAuthorizer(chooseVerifier(jwt, swt), {
    confirm: tokenBinding(config.dpop, now),
    dpopAlgorithms: config.dpop.algorithms,
    enableVerifyScope: config.enableVerifyScope,
    enableExtractScopeToken: config.enableExtractScopeToken,
    skipVerifyScopeWithoutSpec: config.skipVerifyScopeWithoutSpec,
    skipPathPrefixes: config.skipPathPrefixes,
    passThroughClaims: config.passThroughClaims,
  });
  return { authorize, mockIssuer };
}

/**
 * Which verifier a token goes to, as light-4j's unified security handler tells a JWT from a
 * simple web token (`StringUtils.isJwtToken`: "eyJ" and a dot), with "eyJ" (`{"` in base64url,
 * the start of a JWS header) at the start: with both, a JWT is verified as one and any other
 * token introspected; with one, every token goes to it.
 */
function chooseVerifier(jwt?: JwtVerifier, swt?: IntrospectionVerifier): TokenVerifier {
  if (!swt) return jwt!;
  if (!jwt) return swt;
  return (token, request) =>
    token.startsWith('eyJ') && token.includes('.') ? jwt(token) : swt(token, request);
}

/** The binding check of a token with a `cnf` (a JWT or an introspection answer) or a DPoP proof. */
function tokenBinding(dpop: SecurityConfig['dpop'], now: Clock): TokenBindingCheck {
  return createTokenBinding({
    verifyProof: createDpopProofVerifier({
      algorithms: dpop.algorithms,
      iatWindowSeconds: dpop.iatWindowSeconds,
      now,
    }),
    replays: new DpopReplayCache(dpop.replayCacheMaxEntries),
    iatWindowSeconds: dpop.iatWindowSeconds,
    origins: dpop.origins,
    now,
  });
}

/** With `enableVerifySwt` and a source: the introspection verifier and its cache. */
function introspectionVerifier(
  options: SecurityOptions,
  now: Clock,
): IntrospectionVerifier | undefined {
  const { config, introspection } = options;
  if (!config.enableVerifySwt || !introspection) return undefined;
  const { cacheMaxEntries, cacheMaxAgeSeconds } = config.swt;
  return createIntrospectionVerifier({
    source: introspection,
    cache: new IntrospectionCache(cacheMaxEntries, cacheMaxAgeSeconds * 1000, now),
  });
}

/** The JWT verifier: the configured certificates, the key store, the verified-token cache. */
function jwtVerifier(
  options: SecurityOptions,
  now: Clock,
  mockIssuer: MockTokenIssuer | undefined,
): JwtVerifier {
  const { config, claims } = options;
  const { algorithms } = config.jwt;
  const certificates: Map<string, VerificationKey> = config.bootstrapFromKeyService
    ? new Map()
    : loadCertificates(config.jwt.certificate, algorithms);
  if (mockIssuer)
    certificates.set(mockIssuer.kid, verificationKey(mockIssuer.publicKey, ['RS256']));
  const keys = new KeyStore(certificates, {
    source: options.keySource,
    policy: { maxAgeMs: config.jwt.keyMaxAgeSeconds * 1000, ...options.keyPolicy },
    algorithms,
    now,
    events: options.events,
  });
  const skew = config.jwt.clockSkewInSeconds;
  const cache = config.enableJwtCache
    ? new TokenCache<VerifiedToken>(config.jwt.cacheMaxEntries, skew)
    : undefined;
  // bootstrapFromKeyService: a JWKS is fetched at start (a failure is logged by the key store).
  if (config.bootstrapFromKeyService) keys.preload().catch(() => undefined);
  return createJwtVerifier({
    keys,
    clockSkewInSeconds: skew,
    now,
    cache,
    algorithms: mockIssuer && !algorithms.includes('RS256') ? [...algorithms, 'RS256'] : algorithms,
    claims,
  });
}
