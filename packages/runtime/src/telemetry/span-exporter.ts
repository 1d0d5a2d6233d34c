import os from 'node:os';
import type { Logger } from 'pino';
import { jsonObject, type Transport } from '@chain/http';
import { encodeSpan, exportTraceBody, type SpanRecord } from './otlp-json.js';
import type { TelemetryConfig } from './telemetry-config.js';

export interface SpanExporterOptions {
  config: TelemetryConfig;
  serviceName: string;
  logger: Logger;
  http: () => Transport;
}

export type ExportResult =
  { sent: number } | { failed: number; retry: boolean; reason: string } | { idle: true };

const SCOPE = { name: '@chain/runtime', version: '1.0.0' };
/** OTLP: retryable answers; every other 4xx and 5xx is not retried. */
const RETRYABLE = new Set([429, 502, 503, 504]);
/** OTLP: a client reads at most 4 MiB of an answer. */
const MAX_ANSWER = 4 * 1024 * 1024;

/** OpenTelemetry's batch span processor over OTLP/HTTP JSON; one export in flight. */
export class SpanExporter {
  private queue: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<ExportResult> | undefined;
  private failing = false;
  private dropped = 0;
  private readonly url: URL;
  /** Logged: without the query or user info the URL may carry. */
  private readonly endpoint: string;
  private readonly resource: { serviceName: string; attributes: Record<string, string | number> };

  constructor(private readonly options: SpanExporterOptions) {
    this.url = new URL(options.config.endpoint);
    this.endpoint = this.url.origin + this.url.pathname;
    this.resource = {
      serviceName: options.serviceName,
      attributes: { 'host.name': os.hostname(), 'process.pid': process.pid },
    };
  }

  record(span: SpanRecord): void {
    const { maxQueueSize, maxBatchSize } = this.options.config;
    if (this.queue.length >= maxQueueSize) {
      this.dropped += 1;
      return;
    }
    this.queue.push(encodeSpan(span));
    if (this.queue.length >= maxBatchSize && !this.inFlight && this.timer) void this.flush();
  }

  start(): void {
    if (this.timer) return;
    const { config, logger } = this.options;
    logger.info(
      { endpoint: this.endpoint, intervalMs: config.exportIntervalMs },
      'telemetry: exporting spans over OTLP/HTTP',
    );
    this.timer = setInterval(() => {
      if (!this.inFlight && this.queue.length > 0) void this.flush();
    }, config.exportIntervalMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.inFlight) await this.inFlight;
    while (this.queue.length > 0) {
      const result = await this.flush();
      if (!('sent' in result)) break;
    }
  }

  flush(): Promise<ExportResult> {
    if (this.inFlight) return this.inFlight;
    if (this.queue.length === 0) return Promise.resolve({ idle: true });
    const batch = this.queue.splice(0, this.options.config.maxBatchSize);
    this.inFlight = this.send(batch).finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async send(batch: string[]): Promise<ExportResult> {
    const { logger, config, http } = this.options;
    if (this.dropped > 0) {
      logger.warn({ dropped: this.dropped }, 'telemetry: span queue full; spans dropped');
      this.dropped = 0;
    }
    let result: ExportResult;
    try {
      const answer = await http().request({
        method: 'POST',
        url: this.url,
        headers: { ...config.headers, 'Content-Type': 'application/json' },
        body: exportTraceBody(this.resource, SCOPE, batch),
        timeoutMs: config.timeoutMs,
        maxBodyBytes: MAX_ANSWER,
      });
      if (answer.status >= 200 && answer.status < 300) {
        result = { sent: batch.length };
        const rejected = partialSuccess(answer.body);
        if (rejected) logger.warn(rejected, 'telemetry: the collector rejected some spans');
      } else {
        result = {
          failed: batch.length,
          retry: RETRYABLE.has(answer.status),
          reason: `HTTP ${answer.status}`,
        };
      }
    } catch (err) {
      result = { failed: batch.length, retry: true, reason: (err as Error).message };
    }
    if ('failed' in result) {
      const room = config.maxQueueSize - this.queue.length;
      if (result.retry && room >= batch.length) this.queue.unshift(...batch);
      if (!this.failing) {
        this.failing = true;
        const { reason, retry } = result;
        logger.warn({ endpoint: this.endpoint, reason, retry }, 'telemetry: span export failed');
      }
    } else if (this.failing) {
      this.failing = false;
      logger.info('telemetry: span export resumed');
    }
    return result;
  }
}

function partialSuccess(text: string) {
  const { rejectedSpans, errorMessage } =
    (jsonObject(text)?.partialSuccess as Record<string, unknown> | undefined) ?? {};
  if (!(Number(rejectedSpans) > 0)) return undefined;
  const message = typeof errorMessage === 'string' && errorMessage.slice(0, 200);
  return { rejectedSpans: Number(rejectedSpans), ...(message ? { errorMessage: message } : {}) };
}
