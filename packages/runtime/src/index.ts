export { serverConfigSchema, type ServerConfig } from './server-config';
export { createLogger, type Logger } from './logger';
export { correlationMiddleware, traceOf, type Trace } from './correlation';
export { errorHandler, sendError, sendBody } from './error-handler';
export { loadServiceConfig, type ServiceConfig } from './service-config';
export {
  createServiceApp,
  type Routes,
  type ServiceApp,
  type ServiceAppOptions,
} from './service-app';
export { startService, type RunningService, type ServiceDefinition } from './start-service';
export {
  pipeline,
  ChainRequest,
  ChainResponse,
  SERVER_CLASSES,
  type NodeHandler,
} from './pipeline';
