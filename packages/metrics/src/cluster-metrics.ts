import { AggregatorRegistry, type Registry } from 'prom-client';
import { ClientStats } from './client-metrics';
import { hostIdentity } from './host-identity';
import { toInfluxPoints } from './influx-points';
import { InfluxReporter } from './influx-reporter';
import { IntervalStats } from './interval-stats';
import type { MetricsConfig } from './metrics-config';
import type { MetricsOptions, WorkerLink, WorkerSnapshot } from './metrics-options';

// A service of several workers (server.yml `workers`): each worker counts its own requests and
// hands each interval to the primary, the one writer, which adds them up and writes one set of
// points per interval (one timestamp: no worker's point overwrites another's). `GET /metrics` on
// a worker asks the primary, which sums every worker's registry (prom-client's AggregatorRegistry).

/** A worker's side: hands its interval over every interval and, on stop, the last partial one. */
export function snapshotForwarder(
  intervalMs: number,
  take: () => WorkerSnapshot,
  link: WorkerLink,
) {
  let timer: NodeJS.Timeout | undefined;
  // A primary gone (the channel closed) has nobody to write the figures: they are dropped.
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

/** Makes a worker's registry the one the primary's AggregatorRegistry gathers. */
export function shareRegistry(registry: Registry): void {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's listener for the primary's requests.
  new AggregatorRegistry();
}

/** The InfluxDB reporter of a service's interval: its request and client-side figures. */
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
      ...clientStats.drain(context, timestamp),
    ],
  });
}

/**
 * The primary's side: adds the workers' intervals up, writes them, answers `/metrics`. `stop`
 * writes what they handed over since the last report: call it once they have all stopped.
 */
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
