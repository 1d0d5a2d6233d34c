export { HttpClient, tlsOptions, type ClientTls } from './http-client.js';
export {
  fetchOver,
  jsonObject,
  noAnswer,
  TransportError,
  type Transport,
  type TransportFailure,
  type TransportRequest,
  type TransportResponse,
} from './transport.js';
export {
  Downstream,
  type DownstreamAnswer,
  type DownstreamEvents,
  type DownstreamOptions,
  type RetryReason,
} from './downstream.js';
export {
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitState,
} from './circuit-breaker.js';
