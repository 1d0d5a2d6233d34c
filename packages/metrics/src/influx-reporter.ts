import http from 'node:http';
import https from 'node:https';
import { setTimeout as pause } from 'node:timers/promises';
import { InfluxDB, type IPoint } from 'influx';
import type { Logger } from 'pino';
import { IntervalBuffer } from './interval-buffer.js';
import { reportIntervalMsOf, type MetricsConfig } from './metrics-config.js';

/** Points InfluxDB took (late intervals included), intervals still held. */
export interface ReportResult {
  written: number;
  held: number;
}

export interface InfluxReporterOptions {
  config: MetricsConfig;
  logger: Logger;
  /** Collects (and resets) the interval that just ended. */
  collect: (timestamp: number) => IPoint[];
  now: () => number;
  timeoutMs?: number;
  /** The most points in one write (default: the batch size InfluxDB 1.x advises). */
  batchPoints?: number;
}

const FLUSH_MS = 5_000;
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

/** Each interval to InfluxDB, held while it does not answer (README, "InfluxDB"). */
export class InfluxReporter {
  readonly intervalMs: number;
  readonly target: string;
  private readonly influx: InfluxDB;
  private readonly agent: http.Agent;
  private readonly buffer: IntervalBuffer;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<ReportResult> | undefined;
  private databaseReady = false;
  private lastTimestamp = -Infinity;

  constructor(private readonly options: InfluxReporterOptions) {
    const { config } = options;
    this.intervalMs = reportIntervalMsOf(config);
    this.target = `${config.influxdbProtocol}://${config.influxdbHost}:${config.influxdbPort}/${config.influxdbName}`;
    this.buffer = new IntervalBuffer(
      config.bufferIntervals,
      options.logger.child({ influxdb: this.target }),
      options.now,
    );
    // A connection per report: a kept-alive socket would sit idle for an interval and a write on
    // it, once the server closed it, fails (ECONNRESET). Its own agent lets `stop` end a write.
    const { Agent } = config.influxdbProtocol === 'https' ? https : http;
    this.agent = new Agent({ keepAlive: false });
    this.influx = new InfluxDB({
      protocol: config.influxdbProtocol,
      host: config.influxdbHost,
      port: config.influxdbPort,
      database: config.influxdbName,
      username: config.influxdbUser,
      password: config.influxdbPass,
      options: { agent: this.agent },
      pool: {
        maxRetries: 0,
        requestTimeout: options.timeoutMs ?? 10_000,
        backoff: NO_BACKOFF,
      },
    });
  }

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
    this.timer = setInterval(() => void this.report(), this.intervalMs).unref();
  }

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

  /** Ends the current interval and writes the buffer (or joins the pending write); never rejects. */
  report(): Promise<ReportResult> {
    this.collect();
    return this.flushing ?? this.flush();
  }

  private collect(): void {
    const timestamp = Math.max(Math.floor(this.options.now()), this.lastTimestamp + 1);
    this.lastTimestamp = timestamp;
    try {
      const points = this.options.collect(timestamp);
      for (const point of points) point.timestamp = timestamp;
      if (points.length > 0) this.buffer.add(timestamp, points);
    } catch (err) {
      // Runs from a timer: a throw here would end the process.
      this.options.logger.warn(
        { reason: this.describe(err) },
        'metrics: cannot collect the interval; interval discarded',
      );
    }
  }

  private flush(deadline?: AbortSignal): Promise<ReportResult> {
    this.flushing = this.writeBuffer(deadline).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async writeBuffer(deadline?: AbortSignal): Promise<ReportResult> {
    let written = 0;
    while (this.buffer.size > 0 && !deadline?.aborted) {
      const batch = this.buffer.next(this.options.batchPoints ?? 5_000);
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
  }

  private async write(points: IPoint[]): Promise<{ reason: string; refused: boolean } | undefined> {
    try {
      if (!this.databaseReady) {
        // CREATE DATABASE is idempotent in InfluxDB 1.x.
        await this.influx.createDatabase(this.options.config.influxdbName);
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
