export {
  ConfigLoader,
  configFile,
  type ConfigLoaderOptions,
  type SchemaFactory,
  type SchemaHelpers,
} from './config-loader.js';
export { mustPass, readConfigFile } from './config-file.js';
export { type ConfigWarning, type FileKeys, type Light4jKey } from './file-keys.js';
export { listOf, mapOf, redisUrl, text } from './text-forms.js';
export { z } from 'zod';
export { loadConfigSource, logConfigWarnings, type WarningLogger } from './config-source.js';
