export { STATUS, errorBody, isStatusCode, type ErrorBody, type StatusCode } from './status';
export {
  StatusError,
  toStatusError,
  wwwAuthenticate,
  type StatusErrorOptions,
} from './status-error';
export { extractBearer, parseBearer } from './bearer';
export { securityConfigSchema, DEFAULT_CERTIFICATES, type SecurityConfig } from './security-config';
export { createSecurityMiddleware, type SecurityMiddlewareOptions } from './express-adapter';
