// First: an older Node is told in one line before any other module loads (node-version.ts).
export { exitOnOldNode, nodeVersionProblem, NODE_MAJOR } from './node-version.js';
export { type Framework } from './server-config.js';
export { createLogger, exitOnFatalError, flushLogger, type Logger } from './logger.js';
export { readTrace } from './correlation.js';
export {
  type DownstreamTarget,
  type ServiceClient,
  type ServiceDownstream,
} from './service-client.js';
export { type Exchange, type Handler, type RequestContext } from './exchange.js';
export { type ReadinessCheck } from './readiness.js';
export { loadServiceConfig, type ServiceConfig } from './service-config.js';
export {
  createServiceApp,
  createExpressApp,
  type Routes,
  type ServiceApp,
  type ServiceAppOptions,
  type ServiceTools,
} from './service-app.js';
export { contextOf, type ExpressExtensions } from './hosts/express.js';
export { startService, type RunningService, type ServiceDefinition } from './start-service.js';
