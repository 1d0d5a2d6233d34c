import { createAuthorizer, type Authorizer } from './authorizer';
import type { ClaimChecks } from './claims';
import { systemClock, type Clock } from './clock';
import { createDpopProofVerifier } from './dpop-proof';
import { DpopReplayCache } from './dpop-replay-cache';
import { createJwtVerifier, type VerifiedToken } from './jwt-verifier';
import type { KeyPolicy } from './key-policy';
import type { KeyEvents, KeySource } from './key-source';
import { KeyStore } from './key-store';
import { assertMockJwtAllowed, MockTokenIssuer } from './mock-jwt';
import { loadCertificates, verificationKey, type VerificationKey } from './public-key';
import type { SecurityConfig } from './security-config';
import { createTokenBinding } from './token-binding';
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
}

export interface Security {
  /** Undefined when `enableVerifyJwt` is false: every request passes. */
  authorize?: Authorizer;
  /** The `enableMockJwt` token issuer. */
  mockIssuer?: MockTokenIssuer;
}

/**
 * Builds everything security.yml asks for, once, at start: certificates parsed into keys, the
 * key store with its policy, the token cache, the verifier, the binding check of tokens with a
 * `cnf` (with its DPoP proof verifier and replay cache) and the mock issuer. A bad option
 * throws a ConfigError naming security.yml and the key.
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
  if (!config.enableVerifyJwt) return { mockIssuer };

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
  const verify = createJwtVerifier({
    keys,
    clockSkewInSeconds: skew,
    now,
    cache,
    algorithms: mockIssuer && !algorithms.includes('RS256') ? [...algorithms, 'RS256'] : algorithms,
    claims,
  });
  const { dpop } = config;
  const confirm = createTokenBinding({
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
  const authorize = createAuthorizer(verify, {
    confirm,
    dpopAlgorithms: dpop.algorithms,
    enableVerifyScope: config.enableVerifyScope,
    enableExtractScopeToken: config.enableExtractScopeToken,
    skipVerifyScopeWithoutSpec: config.skipVerifyScopeWithoutSpec,
    skipPathPrefixes: config.skipPathPrefixes,
    passThroughClaims: config.passThroughClaims,
  });
  // bootstrapFromKeyService: a JWKS is fetched at start (a failure is logged by the key store).
  if (config.bootstrapFromKeyService) keys.preload().catch(() => undefined);
  return { authorize, mockIssuer };
}
