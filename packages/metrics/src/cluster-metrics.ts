import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { ClientStats, type ClientSnapshot } from './client-metrics.js';
import { clientPoints, hostIdentity, toInfluxPoints, type HostIdentity } from './influx-points.js';
import { InfluxReporter } from './influx-reporter.js';
import { IntervalStats, type SeriesSnapshot } from './interval-stats.js';
import type { MetricsConfig, PrometheusConfig } from './metrics-config.js';

export interface MetricsOptions {
  serviceId: string;
  logger: Logger;
  /** Epoch milliseconds (fractions allowed). */
  now?: () => number;
  host?: HostIdentity;
  /** prometheus.yml; without it `/metrics` (with process metrics) follows metrics.yml `enabled`. */
  prometheus?: PrometheusConfig;
  /** In a worker of server.yml `workers`: the interval goes to the primary, `/metrics` from it. */
  worker?: WorkerLink;
}

export interface WorkerSnapshot {
  series: SeriesSnapshot[];
  client: ClientSnapshot;
}

/** How a worker's metrics reach the primary (the runtime's IPC channel). */
export interface WorkerLink {
  send(snapshot: WorkerSnapshot): Promise<void>;
  prometheus(): Promise<{ contentType: string; body: string }>;
}

// Several workers (server.yml `workers`) hand each interval to the primary, the one writer: one
// timestamp per interval, so no worker's point overwrites another's.

export function snapshotForwarder(
  intervalMs: number,
  take: () => WorkerSnapshot,
  link: WorkerLink,
) {
  let timer: NodeJS.Timeout | undefined;
  // A primary gone (the channel closed) has nobody to write the figures.
  const forward = () => link.send(take()).catch(() => undefined);
  return {
    start() {
      timer ??= setInterval(() => void forward(), intervalMs).unref();
    },
    async stop() {
      if (!timer) return;
      clearInterval(timer);
      timer = undefined;
      await forward();
    },
  };
}

export function intervalReporter(
  config: MetricsConfig,
  { serviceId, logger, host = hostIdentity() }: MetricsOptions,
  stats: IntervalStats,
  clientStats: ClientStats,
  now: () => number,
): InfluxReporter {
  const context = { serviceId, ...host };
  return new InfluxReporter({
    config,
    logger,
    now,
    collect: (timestamp) => [
      ...toInfluxPoints(stats.drain(), context, timestamp),
      ...clientPoints(clientStats.take(), context, timestamp),
    ],
  });
}

/** The primary's side. `stop` writes what the workers handed over: call it once they stopped. */
export function createMetricsMerger(
  config: MetricsConfig,
  options: Omit<MetricsOptions, 'now' | 'worker'>,
) {
  const stats = new IntervalStats();
  const clientStats = new ClientStats();
  const reporter = config.enabled
    ? intervalReporter(config, options, stats, clientStats, () => Date.now())
    : undefined;
  const { enabled } = options.prometheus ?? config;
  const aggregator = enabled ? new AggregatorRegistry() : undefined;
  return {
    add(snapshot: WorkerSnapshot) {
      stats.merge(snapshot.series);
      clientStats.merge(snapshot.client);
    },
    async prometheus() {
      if (!aggregator) return { contentType: 'text/plain', body: '' };
      return { contentType: aggregator.contentType, body: await aggregator.clusterMetrics() };
    },
    start: () => reporter?.start(),
    stop: async () => reporter?.stop(),
  };
}
