import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { hostIdentity, type HostIdentity } from './host-identity';
import { toInfluxPoints } from './influx-points';
import { InfluxReporter, type ReportResult } from './influx-reporter';
import { IntervalStats } from './interval-stats';
import type { MetricsConfig, PrometheusConfig } from './metrics-config';
import { PrometheusMetrics } from './prometheus';

export interface MetricsOptions {
  serviceId: string;
  logger: Logger;
  /** light-4j endpoint name of the request, e.g. `/v1/data@get`. */
  endpointOf: (req: Request, res: Response) => string;
  /** client_id of the verified token, or `unknown`. */
  clientIdOf: (req: Request, res: Response) => string;
  /** Paths that are not counted (the service's own probes). Default `/health`, `/metrics`. */
  excludePaths?: readonly string[];
  /** Clock in epoch milliseconds (fractions allowed): response times and point timestamps. */
  now?: () => number;
  /** The `hostname` and `ipAddress` tags; found from the machine when absent. */
  host?: HostIdentity;
  /**
   * prometheus.yml: `GET /metrics` and its own switch. Without it, `/metrics` (with process
   * metrics) follows metrics.yml `enabled`.
   */
  prometheus?: PrometheusConfig;
}

export interface Metrics {
  /** Records every request when it finishes. Mount before anything that can reject it. */
  middleware: RequestHandler;
  /** `GET /metrics` for Prometheus. */
  prometheus: RequestHandler;
  /** Starts the periodic InfluxDB reporter. */
  start(): void;
  /** Stops the reporter, writing the last partial interval. */
  stop(): Promise<void>;
  /** Ends the current interval now and writes it (tests, shutdown). */
  report(): Promise<ReportResult>;
}

/** A tag value InfluxDB accepts (never empty) from whatever a token's claim held. */
const tagValue = (value: unknown): string => {
  const text = value == null ? '' : String(value);
  return text === '' ? 'unknown' : text;
};

const highResolutionNow = () => performance.timeOrigin + performance.now();

/** Neither InfluxDB nor Prometheus: nothing is counted and `/metrics` is not served. */
function disabledMetrics(): Metrics {
  return {
    middleware: (_req, _res, next) => next(),
    prometheus: (_req, _res, next) => next(),
    start: () => undefined,
    stop: async () => undefined,
    report: async () => ({ written: 0 }),
  };
}

/**
 * Per-request metrics in light-4j's names: counted when the response finishes (so requests
 * refused by the spec or security count too), reported to InfluxDB every interval and reset,
 * and served to Prometheus. Nothing here waits on InfluxDB inside a request.
 */
export function createMetrics(config: MetricsConfig, options: MetricsOptions): Metrics {
  const promConfig = options.prometheus ?? { enabled: config.enabled, enableHotspot: true };
  if (!config.enabled && !promConfig.enabled) return disabledMetrics();
  const now = options.now ?? highResolutionNow;
  const excluded = new Set(options.excludePaths ?? ['/health', '/metrics']);
  const context = { serviceId: options.serviceId, ...(options.host ?? hostIdentity()) };
  const stats = config.enabled ? new IntervalStats() : undefined;
  const prometheus = promConfig.enabled
    ? new PrometheusMetrics(promConfig.enableHotspot)
    : undefined;
  const reporter = stats
    ? new InfluxReporter({
        config,
        logger: options.logger,
        now: () => Math.round(now()),
        collect: (timestamp) => toInfluxPoints(stats.drain(), context, timestamp),
      })
    : undefined;

  const middleware: RequestHandler = (req, res, next) => {
    if (excluded.has(req.path)) {
      next();
      return;
    }
    const started = now();
    res.once('finish', () => {
      const elapsedMs = now() - started;
      const endpoint = tagValue(options.endpointOf(req, res));
      const clientId = tagValue(options.clientIdOf(req, res));
      stats?.record(endpoint, clientId, res.statusCode, elapsedMs);
      prometheus?.record(endpoint, clientId, res.statusCode, elapsedMs);
    });
    next();
  };

  const prometheusHandler: RequestHandler = async (_req, res, next) => {
    if (!prometheus) return next();
    try {
      const { contentType, body } = await prometheus.render();
      res.set('Content-Type', contentType).send(body);
    } catch (err) {
      next(err);
    }
  };

  return {
    middleware,
    prometheus: prometheusHandler,
    start: () => reporter?.start(),
    stop: async () => reporter?.stop(),
    report: async () => (reporter ? reporter.report() : { written: 0 }),
  };
}
