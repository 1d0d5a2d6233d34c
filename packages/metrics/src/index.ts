export {
  metricsConfigSchema,
  prometheusConfigSchema,
  reportIntervalMsOf,
  type MetricsConfig,
  type PrometheusConfig,
} from './metrics-config.js';
export { createMetrics, highResolutionNow, type Metrics } from './metrics.js';
export { ClientStats, clientMetrics } from './client-metrics.js';
export { createMetricsMerger, type WorkerLink, type WorkerSnapshot } from './cluster-metrics.js';
