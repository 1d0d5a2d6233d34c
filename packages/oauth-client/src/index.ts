export {
  clientConfigSchema,
  clientSecrets,
  grantSettings,
  secretConfigSchema,
  type ClientConfig,
  type ClientFiles,
  type SecretConfig,
} from './client-config';
export { HttpClient } from './http-client';
export { Downstream } from './downstream';
export { DownstreamCaller } from './downstream-caller';
export type { Transport } from './transport';
export type { ClientEvents } from './client-events';
export { TokenFetchError } from './token-fetch-error';
export { TokenManager } from './token-manager';
export { DpopKey } from './dpop-key';
export { TokenSource, UserToken } from './renewable-token';
export { credentialHeaders, credentialSummary, forwardedAuthorization } from './call-headers';
export { createKeyClient } from './key-client';
export { createIntrospectionClient, introspectionEndpoint } from './introspection-client';
export { keyServiceAnswer, type ClientCheck } from './light-oauth2-key';
