export {
  STATUS,
  errorBody,
  isStatusCode,
  refusalCode,
  type ErrorBody,
  type StatusCode,
  type StatusRow,
  type TokenHeader,
  type TokenRefusal,
} from './status.js';
export { StatusError, toStatusError, wwwAuthenticate } from './status-error.js';
export { ConfigError } from './config-error.js';
