import type { Logger } from 'pino';
import type { ClientSnapshot } from './client-metrics';
import type { HostIdentity } from './influx-points';
import type { SeriesSnapshot } from './interval-stats';
import type { PrometheusConfig } from './metrics-config';

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
  /** The whole service's `GET /metrics`. */
  prometheus(): Promise<{ contentType: string; body: string }>;
}
