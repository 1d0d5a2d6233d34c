export {
  clientConfigSchema,
  clientSecrets,
  grantSettings,
  secretConfigSchema,
  type ClientConfig,
  type ClientFiles,
  type SecretConfig,
} from './client-config.js';
export { DownstreamCaller } from './downstream-caller.js';
export type { ClientEvents } from './client-events.js';
export { TokenFetchError } from './token-fetch-error.js';
export { TokenManager } from './token-manager.js';
export { DpopKey } from './dpop-key.js';
export { TokenSource, UserToken } from './renewable-token.js';
export { credentialHeaders, credentialSummary, forwardedAuthorization } from './call-headers.js';
export { createKeyClient } from './key-client.js';
export { createIntrospectionClient, introspectionEndpoint } from './introspection-client.js';
export { keyServiceAnswer, LIGHT_OAUTH2_STATUS, type ClientCheck } from './light-oauth2-key.js';
export {
  createOAuthClient,
  type CallOptions,
  type OAuthClient,
  type OAuthClientOptions,
} from './oauth-client.js';
