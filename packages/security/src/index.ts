export { securityConfigSchema, type SecurityConfig } from './security-config.js';
export { type FetchedKey, type KeySource } from './key-source.js';
export {
  RefusedIntrospectionClient,
  type Introspected,
  type IntrospectionClient,
  type IntrospectionSource,
} from './introspection.js';
export { pathPrefixMatcher } from './request-rules.js';
export { BoundedMap } from './bounded-map.js';
export { parseCredentials } from './bearer.js';
export { type ReplayStore, type ReplayVerdict } from './dpop-replay-cache.js';
export {
  RESOURCE_METADATA_PATH,
  resourceIdentifier,
  resourceMetadataUrl,
} from './resource-metadata.js';
export { type AuthInfo } from './authorizer.js';
export { mockTokenResponse, type MockTokenIssuer } from './mock-jwt.js';
export { createRequestGuard, type RequestGuard } from './request-guard.js';
export {
  clientCertificateThumbprint,
  createVerifier,
  loadSecurityConfig,
  type Refusal,
  type Verdict,
  type Verifier,
  type VerifierOptions,
  type VerifyRequest,
} from './verifier.js';
