import { AggregatorRegistry } from 'prom-client';
import { ClientStats, clientMetrics } from './client-metrics.js';
import { intervalReporter, snapshotForwarder, type MetricsOptions } from './cluster-metrics.js';
import { IntervalStats } from './interval-stats.js';
import { reportIntervalMsOf, type MetricsConfig } from './metrics-config.js';
import { PrometheusMetrics } from './prometheus.js';

interface RequestSample {
  /** light-4j's endpoint name, e.g. `/v1/data@get`. */
  endpoint: unknown;
  clientId: unknown;
  statusCode: number;
  /** On `now()`. */
  startedAt: number;
}

/** A tag value InfluxDB accepts (never empty) from whatever a token's claim held. */
const tagValue = (value: unknown): string => String(value ?? '') || 'unknown';

// Read once: `performance.timeOrigin` is a getter that calls into Node on every read.
const TIME_ORIGIN = performance.timeOrigin;
export const highResolutionNow = (): number => TIME_ORIGIN + performance.now();

export function createMetrics(config: MetricsConfig, options: MetricsOptions) {
  const promConfig = options.prometheus ?? { enabled: config.enabled, enableHotspot: true };
  const enabled = config.enabled || promConfig.enabled;
  const now = options.now ?? highResolutionNow;
  const stats = config.enabled ? new IntervalStats() : undefined;
  const clientStats = config.enabled ? new ClientStats() : undefined;
  const prometheus = promConfig.enabled
    ? new PrometheusMetrics(promConfig.enableHotspot)
    : undefined;
  const { worker } = options;
  if (worker && prometheus) {
    AggregatorRegistry.setRegistries([prometheus.registry]);
    // Constructing one installs prom-client's listener for the primary's requests.
    new AggregatorRegistry();
  }
  const take = () => ({ series: stats!.drain(), client: clientStats!.take() });
  const forwarder = worker && stats && snapshotForwarder(reportIntervalMsOf(config), take, worker);
  const reporter =
    stats && !worker
      ? intervalReporter(config, options, stats, clientStats!, () => Math.round(now()))
      : undefined;

  return {
    enabled,
    now,
    record: ({ endpoint, clientId, statusCode, startedAt }: RequestSample) => {
      const elapsedMs = now() - startedAt;
      const endpointTag = tagValue(endpoint);
      const clientTag = tagValue(clientId);
      stats?.record(endpointTag, clientTag, statusCode, elapsedMs);
      prometheus?.record(endpointTag, clientTag, statusCode, elapsedMs);
    },
    refused: (reason: 'rate_limit' | 'overload') => prometheus?.refused(reason),
    client: enabled ? clientMetrics(clientStats, prometheus?.registry) : undefined,
    prometheus: async () => {
      if (!prometheus) return { contentType: 'text/plain', body: '' };
      return worker ? worker.prometheus() : prometheus.render();
    },
    start: () => (forwarder ?? reporter)?.start(),
    stop: async () => (forwarder ?? reporter)?.stop(),
    report: async () => (reporter ? reporter.report() : { written: 0, held: 0 }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
