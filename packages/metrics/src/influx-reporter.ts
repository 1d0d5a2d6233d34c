import http from 'node:http';
import https from 'node:https';
import { InfluxDB, type IPoint } from 'influx';
import type { Logger } from 'pino';
import { reportIntervalMsOf, type MetricsConfig } from './metrics-config';

/** What one report did: points written, or why the interval was discarded. */
export type ReportResult =
  | { written: number }
  | { discarded: number; reason: 'write-failed' | 'collect-failed' }
  /** The previous write is still pending: this interval goes on into the next report. */
  | { deferred: true };

export interface InfluxReporterOptions {
  config: MetricsConfig;
  logger: Logger;
  /** Collects the interval that just ended (and resets it). */
  collect: (timestamp: number) => IPoint[];
  /** Epoch milliseconds; the points' timestamp. */
  now: () => number;
  /** Time-out of one request to InfluxDB (default 10 s). */
  timeoutMs?: number;
}

/** node-influx takes a host out of its pool after a failure; we report once per interval anyway. */
const NO_BACKOFF = {
  getDelay: () => 0,
  next: () => NO_BACKOFF,
  reset: () => NO_BACKOFF,
};

/**
 * Writes each interval to InfluxDB 1.x off the request path. A report that fails (down, past the
 * time-out, credentials refused) is logged once and its interval discarded, as light-4j does; the
 * next interval is tried again. A report due while the previous write is still pending (a slow
 * InfluxDB) is deferred, as light-4j's fixed-rate scheduler does: nothing is collected, so that
 * interval goes into the next report. The database is created when missing. The password is
 * never logged.
 */
export class InfluxReporter {
  readonly intervalMs: number;
  /** `http://host:port/db` as logged: no credentials. */
  readonly target: string;
  private readonly influx: InfluxDB;
  private readonly options: InfluxReporterOptions;
  private timer: NodeJS.Timeout | undefined;
  private pending: Promise<ReportResult> | undefined;
  private databaseReady = false;
  private failing = false;

  constructor(options: InfluxReporterOptions) {
    const { config } = options;
    this.options = options;
    this.intervalMs = reportIntervalMsOf(config);
    this.target = `${config.influxdbProtocol}://${config.influxdbHost}:${config.influxdbPort}/${config.influxdbName}`;
    this.influx = new InfluxDB({
      protocol: config.influxdbProtocol,
      host: config.influxdbHost,
      port: config.influxdbPort,
      database: config.influxdbName,
      username: config.influxdbUser,
      password: config.influxdbPass,
      // A connection per report, of its own: a report comes once an interval, so a kept-alive
      // socket would mostly sit idle until the server or a shared agent's clean-up closed it,
      // and a write on such a socket fails (ECONNRESET) and loses the interval.
      options: {
        agent:
          config.influxdbProtocol === 'https'
            ? new https.Agent({ keepAlive: false })
            : new http.Agent({ keepAlive: false }),
      },
      pool: {
        maxRetries: 0,
        requestTimeout: options.timeoutMs ?? 10_000,
        backoff: NO_BACKOFF,
      },
    });
  }

  /** Whether reports are scheduled (between `start` and `stop`). */
  get running(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    if (this.timer) return;
    const { config, logger } = this.options;
    logger.info(
      { influxdb: this.target, user: config.influxdbUser, intervalMs: this.intervalMs },
      'metrics: reporting to InfluxDB',
    );
    this.timer = setInterval(() => void this.report(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops the schedule and writes the last, partial interval (waiting at most `flushMs`). */
  async stop(flushMs = 1_000): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    let wait: NodeJS.Timeout | undefined;
    // A write still pending would defer the last interval to a report that never comes: it is
    // waited for first, within the same bound.
    const last = async () => {
      if (this.pending) await this.pending;
      return this.report();
    };
    await Promise.race([
      last(),
      new Promise<void>((resolve) => {
        wait = setTimeout(resolve, flushMs);
        wait.unref();
      }),
    ]);
    clearTimeout(wait);
  }

  /**
   * Ends the current interval now: collects it, resets it, writes it. Never rejects. While the
   * previous write is pending, nothing is collected (`deferred`).
   */
  report(): Promise<ReportResult> {
    const { logger } = this.options;
    if (this.pending) {
      logger.warn(
        { influxdb: this.target },
        'metrics: previous report to InfluxDB still pending; this interval goes into the next',
      );
      return Promise.resolve({ deferred: true });
    }
    let points: IPoint[];
    try {
      points = this.options.collect(this.options.now());
    } catch (err) {
      // Runs from a timer: a throw here would end the process.
      logger.warn(
        { reason: this.describe(err) },
        'metrics: cannot collect the interval; interval discarded',
      );
      return Promise.resolve({ discarded: 0, reason: 'collect-failed' });
    }
    const pending = this.write(points).finally(() => {
      this.pending = undefined;
    });
    this.pending = pending;
    return pending;
  }

  private async write(points: IPoint[]): Promise<ReportResult> {
    const { config, logger } = this.options;
    if (points.length === 0) return { written: 0 };
    try {
      if (!this.databaseReady) {
        // CREATE DATABASE is idempotent in InfluxDB 1.x.
        await this.influx.createDatabase(config.influxdbName);
        this.databaseReady = true;
      }
      await this.influx.writePoints(points, { precision: 'ms' });
      if (this.failing) {
        this.failing = false;
        logger.info({ influxdb: this.target }, 'metrics: reporting to InfluxDB resumed');
      }
      return { written: points.length };
    } catch (err) {
      const reason = this.describe(err);
      if (/database not found/i.test(reason)) this.databaseReady = false;
      this.failing = true;
      logger.warn(
        { influxdb: this.target, points: points.length, reason },
        'metrics: cannot report to InfluxDB; interval discarded',
      );
      return { discarded: points.length, reason: 'write-failed' };
    }
  }

  /** The error's message only: the error object holds the request, with its credentials. */
  private describe(err: unknown): string {
    const message = err instanceof Error ? err.message : String(err);
    const secret = this.options.config.influxdbPass;
    return secret ? message.split(secret).join('****') : message;
  }
}
