export { STATUS, errorBody, isStatusCode, type ErrorBody, type StatusCode } from './status';
export { StatusError, toStatusError, wwwAuthenticate } from './status-error';
export { ConfigError } from './config-error';
