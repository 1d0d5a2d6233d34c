export { STATUS, errorBody, isStatusCode, type ErrorBody, type StatusCode } from './status.js';
export { errorChallenge, StatusError, toStatusError, wwwAuthenticate } from './status-error.js';
export { ConfigError } from './config-error.js';
