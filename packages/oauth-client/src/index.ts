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
export { TokenError, type TokenErrorCode, type TokenErrorDetails } from './token-error';
export { TokenRequester, type AccessToken, type Grant, type TokenEndpoint } from './token-request';
export {
  TokenCache,
  type RenewalPolicy,
  type TokenCacheOptions,
  type TokenState,
} from './token-cache';
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
