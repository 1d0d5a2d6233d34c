export {
  metricsConfigSchema,
  prometheusConfigSchema,
  reportIntervalMsOf,
  type MetricsConfig,
  type PrometheusConfig,
} from './metrics-config';
export { createMetrics, highResolutionNow, type Metrics } from './metrics';
export { ClientStats, clientMetrics } from './client-metrics';
export { createMetricsMerger, type WorkerLink, type WorkerSnapshot } from './cluster-metrics';
