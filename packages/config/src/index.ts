export {
  ConfigLoader,
  DEFAULT_CONFIG_DIR,
  configFile,
  type ConfigLoaderOptions,
  type ConfigSource,
  type SchemaFactory,
  type SchemaHelpers,
} from './config-loader';
export { type ConfigWarning, type FileKeys, type Light4jKey } from './file-keys';
export { environmentName, interpolate, type ValueSources } from './interpolate';
export { closestKey } from './key-suggest';
export { listOf, mapOf, text } from './text-forms';
export { parseYamlValue } from './yaml-text';
export { z } from 'zod';
