export { type Framework, type ServerConfig } from './server-config';
export { createLogger, exitOnFatalError, flushLogger, type Logger } from './logger';
export {
  newSpanId,
  newTraceId,
  parseTraceparent,
  parseTracestate,
  readTrace,
  Trace,
} from './correlation';
export {
  type DownstreamTarget,
  type ServiceClient,
  type ServiceDownstream,
} from './service-client';
export { SpanExporter } from './telemetry/span-exporter';
export { encodeSpan, exportTraceBody, unixNano, type SpanRecord } from './telemetry/otlp-json';
export {
  createExchange,
  type Exchange,
  type Handler,
  type RequestContext,
  type Stage,
} from './exchange';
export { sendJson } from './respond';
export { asStatusError, createErrorRenderer, reasonOf } from './error-renderer';
export { readBody } from './read-body';
export { createReadiness, type ReadinessCheck } from './readiness';
export { loadServiceConfig, type ServiceConfig } from './service-config';
export {
  createServiceApp,
  createExpressApp,
  type Routes,
  type ServiceApp,
  type ServiceAppOptions,
  type ServiceTools,
} from './service-app';
export { contextOf, expressApplication, type ExpressExtensions } from './hosts/express';
export { nativeListener } from './hosts/native';
export { createHttpServer, ShutdownGate } from './http-server';
export {
  loadTls,
  startService,
  type RunningService,
  type ServiceDefinition,
} from './start-service';
