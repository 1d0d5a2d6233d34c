export { securityConfigSchema, type SecurityConfig } from './security-config';
export { type FetchedKey, type KeySource } from './key-source';
export {
  RefusedIntrospectionClient,
  type Introspected,
  type IntrospectionClient,
  type IntrospectionSource,
} from './introspection-source';
export { applyPassThrough } from './request-rules';
export { verifiedCallerOf, type AuthInfo } from './authorizer';
export { mockTokenResponse, type MockTokenIssuer } from './mock-jwt';
export { createRequestGuard, type RequestGuard } from './request-guard';
