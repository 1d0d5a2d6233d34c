export {
  clientConfigSchema,
  clientSecrets,
  grantSettings,
  secretConfigSchema,
  type ClientConfig,
  type ClientFiles,
  type ClientAuthMethod,
  type GrantName,
  type GrantSettings,
  type SecretConfig,
} from './client-config';
export { HttpClient, type HttpClientConfig } from './http-client';
export { Downstream, type DownstreamAnswer, type DownstreamOptions } from './downstream';
export {
  DownstreamCaller,
  type CallRequest,
  type DownstreamCallerOptions,
} from './downstream-caller';
export { CircuitBreaker, type CircuitBreakerOptions, type CircuitState } from './circuit-breaker';
export {
  TransportError,
  type Transport,
  type TransportFailure,
  type TransportRequest,
  type TransportResponse,
} from './transport';
export {
  type ClientEvents,
  type KeyFetchOutcome,
  type RenewalTrigger,
  type RetryReason,
} from './client-events';
export {
  TokenFetchError,
  type TokenFetchErrorCode,
  type TokenFetchErrorDetails,
} from './token-fetch-error';
export { TokenRequester, type AccessToken, type Grant, type TokenEndpoint } from './token-request';
export {
  RenewableToken,
  type RenewalPolicy,
  type RenewableTokenOptions,
  type TokenState,
} from './renewable-token';
export { TokenManager, type CodeExchange, type TokenManagerOptions } from './token-manager';
export { TokenSource } from './token-source';
export { DpopKey } from './dpop-key';
export { UserToken, type UserTokenOptions } from './user-token';
export {
  credentialHeaders,
  credentialSummary,
  forwardedAuthorization,
  tokenFingerprint,
  type OutgoingTrace,
  type TokenSummary,
} from './call-headers';
export { createKeyClient, KeyFetchError, type KeyClientOptions } from './key-client';
export {
  createIntrospectionClient,
  introspectionEndpoint,
  IntrospectionFetchError,
  MAX_INTROSPECTION_ANSWER,
  type IntrospectionClientOptions,
  type IntrospectionEndpoint,
} from './introspection-client';
export {
  KEY_SERVICE_STATUS,
  isNoSuchKid,
  keyServiceAnswer,
  type ClientCheck,
  type KeyServiceAnswer,
  type KeyServiceOptions,
} from './light-oauth2-key';
