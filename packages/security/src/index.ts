export { extractBearer, parseBearer } from './bearer';
export { securityConfigSchema, DEFAULT_CERTIFICATES, type SecurityConfig } from './security-config';
export {
  SUPPORTED_ALGORITHMS,
  DEFAULT_ALGORITHMS,
  algorithmsOfKey,
  type Algorithm,
} from './algorithms';
export { systemClock, type Clock } from './clock';
export { toPublicKey, verificationKey, type KeyMaterial, type VerificationKey } from './public-key';
export { DEFAULT_KEY_POLICY, type KeyPolicy } from './key-policy';
export { type FetchedKey, type KeyEvents, type KeySource } from './key-source';
export {
  RefusedIntrospectionClient,
  type Introspected,
  type IntrospectionClient,
  type IntrospectionSource,
} from './introspection-source';
export { KeyStore } from './key-store';
export { type ClaimChecks } from './claims';
export { isSkippedPath, passThroughHeaders, applyPassThrough } from './request-rules';
export { verifiedCallerOf, type AuthInfo } from './authorizer';
export { MOCK_KID, type MockTokenIssuer, type TokenResponse } from './mock-jwt';
export { mockTokenResponse } from './mock-token-request';
export { createSecurity, type Security, type SecurityOptions } from './create-security';
export {
  createRequestGuard,
  type GuardLogger,
  type GuardRequest,
  type RequestGuard,
  type RequestGuardOptions,
} from './request-guard';
