export { metricsConfigSchema, reportIntervalMsOf, type MetricsConfig } from './metrics-config';
export { createMetrics, type Metrics, type MetricsOptions, type RequestSample } from './metrics';
export { type ReportResult } from './influx-reporter';
export { type HostIdentity } from './host-identity';
