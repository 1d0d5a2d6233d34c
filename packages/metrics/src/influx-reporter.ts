import http from 'node:http';
import https from 'node:https';
import { setTimeout as pause } from 'node:timers/promises';
import { InfluxDB, type IPoint } from 'influx';
import type { Logger } from 'pino';
import { IntervalBuffer } from './interval-buffer';
import { reportIntervalMsOf, type MetricsConfig } from './metrics-config';

/** What one report did. */
export interface ReportResult {
  /** Points InfluxDB took (late intervals included). */
  written: number;
  /** Intervals still held for a later report: InfluxDB did not answer. */
  held: number;
}

export interface InfluxReporterOptions {
  config: MetricsConfig;
  logger: Logger;
  /** Collects the interval that just ended (and resets it). */
  collect: (timestamp: number) => IPoint[];
  /** Epoch milliseconds: the intervals' timestamps, and how long an outage lasted. */
  now: () => number;
  /** Time-out of one request to InfluxDB (default 10 s). */
  timeoutMs?: number;
  /** The most points in one write (default 5,000, the batch size InfluxDB 1.x advises). */
  batchPoints?: number;
}

/**
 * How long `stop` may take to write the last interval and what is held, trying again every
 * `RETRY_MS` while InfluxDB does not answer: what a service gets between the end of its requests
 * and its exit (both in a single process and in the primary of `workers`).
 */
export const FLUSH_MS = 5_000;
const RETRY_MS = 250;

/** node-influx takes a host out of its pool after a failure; we report once per interval anyway. */
const NO_BACKOFF = {
  getDelay: () => 0,
  next: () => NO_BACKOFF,
  reset: () => NO_BACKOFF,
};

/** A write InfluxDB answered with a bad request: sending the same points again cannot mend it. */
const isRefusal = (err: unknown): boolean => {
  const status = (err as { res?: { statusCode?: number } })?.res?.statusCode;
  return status === 400 || status === 413;
};

/**
 * Writes each interval to InfluxDB 1.x off the request path. Every interval goes into a bounded
 * buffer (metrics.yml `bufferIntervals`, ./interval-buffer) and the buffer is written oldest
 * first, in writes of whole intervals of at most `batchPoints` points, each point with its
 * interval's own timestamp (ms). An interval leaves the buffer only once InfluxDB took it; a
 * write that fails (down, past the time-out, credentials refused) keeps it and the intervals after
 * it, in order, for the next report. A write that timed out may still have been applied: sent
 * again, its points have the same measurement, tags, timestamp and value, and InfluxDB keeps one
 * (the last write of a point wins), so nothing is counted twice. An interval that ends while a
 * write is pending waits in the buffer and is written by that same flush. The database is created
 * when missing. The password is never logged.
 */
export class InfluxReporter {
  readonly intervalMs: number;
  /** `http://host:port/db` as logged: no credentials. */
  readonly target: string;
  private readonly influx: InfluxDB;
  private readonly agent: http.Agent;
  private readonly buffer: IntervalBuffer;
  private readonly options: InfluxReporterOptions;
  private readonly batchPoints: number;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<ReportResult> | undefined;
  private databaseReady = false;
  private lastTimestamp = -Infinity;

  constructor(options: InfluxReporterOptions) {
    const { config } = options;
    this.options = options;
    this.intervalMs = reportIntervalMsOf(config);
    this.batchPoints = options.batchPoints ?? 5_000;
    this.target = `${config.influxdbProtocol}://${config.influxdbHost}:${config.influxdbPort}/${config.influxdbName}`;
    this.buffer = new IntervalBuffer(
      config.bufferIntervals,
      options.logger.child({ influxdb: this.target }),
      options.now,
    );
    // A connection per report, of its own: a report comes once an interval, so a kept-alive
    // socket would mostly sit idle until the server or a shared agent's clean-up closed it, and a
    // write on such a socket fails (ECONNRESET). Its own agent also lets `stop` end a write still
    // in flight when the flush time is up.
    this.agent =
      config.influxdbProtocol === 'https'
        ? new https.Agent({ keepAlive: false })
        : new http.Agent({ keepAlive: false });
    this.influx = new InfluxDB({
      protocol: config.influxdbProtocol,
      host: config.influxdbHost,
      port: config.influxdbPort,
      database: config.influxdbName,
      username: config.influxdbUser,
      password: config.influxdbPass,
      options: { agent: this.agent },
      // The time-out of a write is node-influx's own (its request's `timeout`).
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
      {
        influxdb: this.target,
        user: config.influxdbUser,
        intervalMs: this.intervalMs,
        bufferIntervals: config.bufferIntervals,
      },
      'metrics: reporting to InfluxDB',
    );
    this.timer = setInterval(() => void this.report(), this.intervalMs);
    this.timer.unref();
  }

  /**
   * Stops the schedule, then writes the last, partial interval and whatever is held, trying again
   * while InfluxDB does not answer, for at most `flushMs`; a write still in flight then is ended.
   * What is left is said in a line and lost.
   */
  async stop(flushMs = FLUSH_MS): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    const deadline = AbortSignal.timeout(flushMs);
    const cut = () => this.agent.destroy();
    deadline.addEventListener('abort', cut);
    try {
      // The last interval is collected once the pending write is done with: in order.
      await this.flushing;
      this.collect();
      while (this.buffer.size > 0 && !deadline.aborted) {
        const { held } = await this.flush(deadline);
        if (held === 0) break;
        await pause(RETRY_MS, undefined, { signal: deadline }).catch(() => undefined);
      }
      this.buffer.abandon();
    } finally {
      deadline.removeEventListener('abort', cut);
    }
  }

  /**
   * Ends the current interval now: collects it (and resets it) into the buffer, and writes the
   * buffer. Never rejects. While a write is pending, the interval waits for that same flush.
   */
  report(): Promise<ReportResult> {
    this.collect();
    return this.flushing ?? this.flush();
  }

  /** The interval that just ended, into the buffer, every point with its timestamp. */
  private collect(): void {
    // Strictly increasing whole milliseconds: two intervals never share a timestamp, so one
    // never overwrites the other's points in InfluxDB.
    const timestamp = Math.max(Math.floor(this.options.now()), this.lastTimestamp + 1);
    this.lastTimestamp = timestamp;
    let points: IPoint[];
    try {
      points = this.options.collect(timestamp);
    } catch (err) {
      // Runs from a timer: a throw here would end the process.
      this.options.logger.warn(
        { reason: this.describe(err) },
        'metrics: cannot collect the interval; interval discarded',
      );
      return;
    }
    if (points.length === 0) return;
    for (const point of points) point.timestamp = timestamp;
    this.buffer.add(timestamp, points);
  }

  /** Writes the buffer, oldest first, until it is empty or a write fails (or `stop` is due). */
  private flush(deadline?: AbortSignal): Promise<ReportResult> {
    const run = async (): Promise<ReportResult> => {
      let written = 0;
      while (this.buffer.size > 0 && !deadline?.aborted) {
        const batch = this.buffer.next(this.batchPoints);
        const points = batch.flatMap((interval) => interval.points);
        const failure = await this.write(points);
        if (failure === undefined) {
          this.buffer.written(batch.length);
          written += points.length;
        } else if (failure.refused) {
          this.buffer.refused(batch.length, failure.reason);
        } else {
          this.buffer.failed(failure.reason);
          break;
        }
      }
      return { written, held: this.buffer.size };
    };
    const flushing = run().finally(() => {
      this.flushing = undefined;
    });
    this.flushing = flushing;
    return flushing;
  }

  /** One write; undefined when InfluxDB took it, else why not. */
  private async write(points: IPoint[]): Promise<{ reason: string; refused: boolean } | undefined> {
    const { config } = this.options;
    try {
      if (!this.databaseReady) {
        // CREATE DATABASE is idempotent in InfluxDB 1.x.
        await this.influx.createDatabase(config.influxdbName);
        this.databaseReady = true;
      }
      await this.influx.writePoints(points, { precision: 'ms' });
      return undefined;
    } catch (err) {
      const reason = this.describe(err);
      if (/database not found/i.test(reason)) this.databaseReady = false;
      return { reason, refused: this.databaseReady && isRefusal(err) };
    }
  }

  /** The error's message only: the error object holds the request, with its credentials. */
  private describe(err: unknown): string {
    const message = err instanceof Error ? err.message : String(err);
    const secret = this.options.config.influxdbPass;
    return secret ? message.split(secret).join('****') : message;
  }
}
