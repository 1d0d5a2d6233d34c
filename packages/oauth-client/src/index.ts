export {
  clientConfigSchema,
  clientSecrets,
  secretConfigSchema,
  type ClientConfig,
  type GrantConfig,
  type SecretConfig,
} from './client-config';
export { tlsOptions, createHttpsAgent } from './tls-options';
export { Downstream, type DownstreamOptions } from './downstream';
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
export { TokenManager, type TokenManagerOptions } from './token-manager';
export {
  credentialHeaders,
  credentialSummary,
  tokenFingerprint,
  type TokenSummary,
} from './call-headers';
export { createKeyClient, KeyFetchError, type KeyClientOptions } from './key-client';
export {
  KEY_SERVICE_STATUS,
  isNoSuchKid,
  keyServiceAnswer,
  type ClientCheck,
  type KeyServiceAnswer,
  type KeyServiceOptions,
} from './light-oauth2-key';
