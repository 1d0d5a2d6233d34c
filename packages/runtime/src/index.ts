export { type Framework } from './server-config';
export { createLogger, exitOnFatalError, flushLogger, type Logger } from './logger';
export { exitOnOldNode, nodeVersionProblem, NODE_MAJOR } from './node-version';
export { readTrace } from './correlation';
export {
  type DownstreamTarget,
  type ServiceClient,
  type ServiceDownstream,
} from './service-client';
export { type Exchange, type Handler, type RequestContext } from './exchange';
export { type ReadinessCheck } from './readiness';
export { loadServiceConfig, type ServiceConfig } from './service-config';
export {
  createServiceApp,
  createExpressApp,
  type Routes,
  type ServiceApp,
  type ServiceAppOptions,
  type ServiceTools,
} from './service-app';
export { contextOf, type ExpressExtensions } from './hosts/express';
export { startService, type RunningService, type ServiceDefinition } from './start-service';
