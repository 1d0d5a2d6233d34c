export {
  ConfigLoader,
  configFile,
  type ConfigLoaderOptions,
  type SchemaFactory,
  type SchemaHelpers,
} from './config-loader';
export { type ConfigWarning, type FileKeys, type Light4jKey } from './file-keys';
export { listOf, mapOf, text } from './text-forms';
export { z } from 'zod';
