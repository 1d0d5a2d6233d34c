export {
  clientConfigSchema,
  secretConfigSchema,
  type ClientConfig,
  type GrantConfig,
  type SecretConfig,
} from './client-config';
export { tlsOptions, createHttpsAgent } from './tls-options';
export { Downstream, type DownstreamOptions } from './downstream';
