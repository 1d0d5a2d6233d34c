export { ConfigError } from './config-error';
export {
  ConfigLoader,
  DEFAULT_CONFIG_DIR,
  type ConfigLoaderOptions,
  type ConfigSource,
  type SchemaFactory,
  type SchemaHelpers,
} from './config-loader';
export { interpolate } from './interpolate';
export { z } from 'zod';
