import { createAuthorizer, type Authorizer } from './authorizer';
import { systemClock, type Clock } from './clock';
import { createJwtVerifier, type VerifiedToken } from './jwt-verifier';
import { KeyStore, type KeyResolver, type KeyResolverPolicy } from './key-store';
import { assertMockJwtAllowed, MockTokenIssuer } from './mock-jwt';
import { loadCertificates } from './public-key';
import type { SecurityConfig } from './security-config';
import { TokenCache } from './token-cache';

export interface SecurityOptions {
  config: SecurityConfig;
  /** Fetches keys of unknown kids (the key distribution server of client.yml `oauth.key`). */
  resolveKey?: KeyResolver;
  keyPolicy?: Partial<KeyResolverPolicy>;
  now?: Clock;
  /** Environment for the production check of `enableMockJwt` (default process.env). */
  env?: NodeJS.ProcessEnv;
  maxTokenLength?: number;
}

export interface Security {
  /** Undefined when `enableVerifyJwt` is false: every request passes. */
  authorize?: Authorizer;
  keys?: KeyStore;
  cache?: TokenCache<VerifiedToken>;
  /** The `enableMockJwt` token issuer. */
  mockIssuer?: MockTokenIssuer;
}

/**
 * Builds everything security.yml asks for, once, at start: certificates parsed into key objects,
 * the key store with its look-up policy, the token cache, the verifier and the mock issuer.
 * A bad option throws a ConfigError naming security.yml and the key.
 */
export function createSecurity(options: SecurityOptions): Security {
  const { config } = options;
  const now = options.now ?? systemClock;
  assertMockJwtAllowed(config.enableMockJwt, options.env ?? process.env);
  const mockIssuer = config.enableMockJwt ? new MockTokenIssuer(now) : undefined;
  if (!config.enableVerifyJwt) return { mockIssuer };

  const certificates = loadCertificates(config.jwt.certificate);
  if (mockIssuer) certificates.set(mockIssuer.kid, mockIssuer.publicKey);
  const keys = new KeyStore(certificates, {
    resolver: options.resolveKey,
    policy: options.keyPolicy,
    now,
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
    maxTokenLength: options.maxTokenLength,
  });
  return { authorize: createAuthorizer(verify, config.enableVerifyScope), keys, cache, mockIssuer };
}
