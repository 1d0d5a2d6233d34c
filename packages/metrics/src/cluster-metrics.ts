import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { ClientStats, type ClientSnapshot } from './client-metrics';
import { hostIdentity, type HostIdentity } from './host-identity';
import { toInfluxPoints } from './influx-points';
import { InfluxReporter } from './influx-reporter';
import { IntervalStats, type SeriesSnapshot } from './interval-stats';
import type { MetricsConfig, PrometheusConfig } from './metrics-config';

/**
 * Metrics of a service that runs as several worker processes (server.yml `workers`). Each worker
 * counts its own requests; the primary process, which serves nothing, is the one writer:
 *
 * - InfluxDB: every interval (and once more when it stops) a worker hands its interval over to
 *   the primary as plain data (a WorkerSnapshot) and resets it; the primary adds the workers'
 *   intervals up (counts summed, timers combined) and writes one set of points per interval,
 *   with one timestamp. A figure is written once: no point of one worker overwrites another's
 *   (same tags, same timestamp), and none is counted twice.
 * - Prometheus: whichever worker answers `GET /metrics` asks the primary, which gathers every
 *   worker's registry (prom-client's AggregatorRegistry) and answers with the sums.
 */

/** One worker's interval. */
export interface WorkerSnapshot {
  series: SeriesSnapshot[];
  client: ClientSnapshot;
}

/** How a worker's metrics reach the primary (the runtime carries them over the IPC channel). */
export interface WorkerLink {
  /** Hands one interval to the primary; resolves once it is sent. */
  send(snapshot: WorkerSnapshot): Promise<void>;
  /** The whole service's `GET /metrics` text, from the primary. */
  prometheus(): Promise<{ contentType: string; body: string }>;
}

/**
 * A worker's side of the InfluxDB report: hands its interval to the primary every interval and,
 * on stop, the last partial one.
 */
export class SnapshotForwarder {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly take: () => WorkerSnapshot,
    private readonly link: WorkerLink,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.forward(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.forward();
  }

  private async forward(): Promise<void> {
    // A primary gone (the channel closed) has nobody to write the figures: they are dropped.
    await this.link.send(this.take()).catch(() => undefined);
  }
}

/** Makes a worker's registry the one the primary's AggregatorRegistry gathers. */
export function shareRegistry(registry: Registry): void {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's listener for the primary's requests.
  new AggregatorRegistry();
}

export interface MetricsMergerOptions {
  serviceId: string;
  logger: Logger;
  prometheus?: PrometheusConfig;
  host?: HostIdentity;
}

/** The primary's side: adds the workers' intervals up, writes them, answers `/metrics`. */
export interface MetricsMerger {
  add(snapshot: WorkerSnapshot): void;
  prometheus(): Promise<{ contentType: string; body: string }>;
  start(): void;
  /** Writes what the workers handed over since the last report (call once they have all stopped). */
  stop(): Promise<void>;
}

export function createMetricsMerger(
  config: MetricsConfig,
  options: MetricsMergerOptions,
): MetricsMerger {
  const promConfig = options.prometheus ?? { enabled: config.enabled, enableHotspot: true };
  const stats = new IntervalStats();
  const clientStats = new ClientStats();
  const context = { serviceId: options.serviceId, ...(options.host ?? hostIdentity()) };
  const reporter = config.enabled
    ? new InfluxReporter({
        config,
        logger: options.logger,
        now: () => Date.now(),
        collect: (timestamp) => [
          ...toInfluxPoints(stats.drain(), context, timestamp),
          ...clientStats.drain(context, timestamp),
        ],
      })
    : undefined;
  const aggregator = promConfig.enabled ? new AggregatorRegistry() : undefined;
  return {
    add(snapshot) {
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
