export { metricsConfigSchema, type MetricsConfig } from './metrics-config';
export { createMetrics, type Metrics, type MetricsOptions } from './metrics';
