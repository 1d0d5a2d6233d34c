export { serverConfigSchema, FRAMEWORKS, type Framework, type ServerConfig } from './server-config';
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
  createServiceClient,
  type DownstreamTarget,
  type ServiceClient,
  type ServiceClientOptions,
  type ServiceDownstream,
} from './service-client';
export { telemetryConfigSchema, type TelemetryConfig } from './telemetry/telemetry-config';
export {
  SpanExporter,
  type ExportResult,
  type SpanExporterOptions,
} from './telemetry/span-exporter';
export { encodeSpan, exportTraceBody, unixNano, type SpanRecord } from './telemetry/otlp-json';
export {
  answered,
  createExchange,
  type Exchange,
  type Handler,
  type RequestContext,
  type Stage,
} from './exchange';
export { send, sendEmpty, sendError, sendJson, ERROR_TYPE, JSON_TYPE } from './respond';
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
export {
  contextOf,
  expressApplication,
  expressStage,
  type ExpressExtensions,
  type ExpressStages,
} from './hosts/express';
export { nativeListener, type RenderError } from './hosts/native';
export { createHttpServer, ShutdownGate, type ServedApp } from './http-server';
export {
  loadTls,
  startService,
  type RunningService,
  type ServiceDefinition,
} from './start-service';
export {
  runPrimary,
  workerNumber,
  type ListeningPort,
  type Primary,
  type PrimaryOptions,
} from './workers';
