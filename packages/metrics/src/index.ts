export {
  metricsConfigSchema,
  prometheusConfigSchema,
  reportIntervalMsOf,
  type MetricsConfig,
  type PrometheusConfig,
} from './metrics-config';
export {
  createMetrics,
  highResolutionNow,
  type Metrics,
  type MetricsOptions,
  type RequestSample,
} from './metrics';
export { type ReportResult } from './influx-reporter';
export { type HostIdentity } from './host-identity';
export { ClientStats, clientMetrics, type ClientMetrics } from './client-metrics';
export {
  createMetricsMerger,
  type MetricsMerger,
  type WorkerLink,
  type WorkerSnapshot,
} from './cluster-metrics';
