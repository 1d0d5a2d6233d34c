export { STATUS, errorBody, isStatusCode, type ErrorBody, type StatusCode } from './status';
export {
  StatusError,
  toStatusError,
  wwwAuthenticate,
  type StatusErrorOptions,
} from './status-error';
export { extractBearer, parseBearer } from './bearer';
export { securityConfigSchema, DEFAULT_CERTIFICATES, type SecurityConfig } from './security-config';
export { systemClock, type Clock } from './clock';
export { type KeyMaterial } from './public-key';
export { DEFAULT_KEY_POLICY, type KeyResolver, type KeyResolverPolicy } from './key-store';
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
