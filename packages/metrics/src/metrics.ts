import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { MetricsConfig } from './metrics-config';

export interface MetricsOptions {
  serviceId: string;
  logger: Logger;
  /** light-4j endpoint name of the request, e.g. `/v1/data@get`. */
  endpointOf: (req: Request, res: Response) => string;
  /** client_id of the verified token, or `unknown`. */
  clientIdOf: (req: Request, res: Response) => string;
}

export interface Metrics {
  /** Records every request when it finishes. Mount before anything that can reject it. */
  middleware: RequestHandler;
  /** `GET /metrics` for Prometheus. */
  prometheus: RequestHandler;
  /** Starts the periodic InfluxDB reporter. */
  start(): void;
  /** Stops the reporter. */
  stop(): Promise<void>;
}

/** Placeholder until the metrics issue lands: counts nothing. */
export function createMetrics(config: MetricsConfig, options: MetricsOptions): Metrics {
  void config;
  void options;
  return {
    middleware: (_req, _res, next) => next(),
    prometheus: (_req, res) => {
      res.type('text/plain').send('');
    },
    start: () => undefined,
    stop: async () => undefined,
  };
}
