import { configFile, mapOf, text, z } from '@chain/config';

/**
 * telemetry.yml (ours; light-4j has none): the export of request spans to an OpenTelemetry
 * collector over OTLP/HTTP (JSON). Off by default, and free when off: no span is made.
 */
export interface TelemetryConfig {
  /** Export spans. */
  enabled: boolean;
  /** The collector's OTLP/HTTP traces URL (OpenTelemetry's default port 4318, path /v1/traces). */
  endpoint: string;
  /** Headers of every export request (a hosted collector's key); never logged. */
  headers: Record<string, string>;
  /** `service.name` of the spans; server.yml `serviceId` when absent. */
  serviceName?: string;
  /** How often queued spans are sent (OpenTelemetry's batch processor `scheduledDelayMillis`). */
  exportIntervalMs: number;
  /** Most spans in one export request; a full batch is sent at once. */
  maxBatchSize: number;
  /** Most spans waiting; more are dropped (and counted in the log), never slowing a request. */
  maxQueueSize: number;
  /** Time-out of one export request. */
  timeoutMs: number;
}

export const telemetryConfigSchema = configFile<TelemetryConfig>(
  () =>
    z
      .strictObject({
        enabled: z.boolean().default(false),
        endpoint: z.url({ protocol: /^https?$/ }).default('http://localhost:4318/v1/traces'),
        headers: mapOf(text()).default({}),
        serviceName: z.string().min(1).optional(),
        exportIntervalMs: z.number().int().min(10).default(1000),
        maxBatchSize: z.number().int().min(1).default(512),
        maxQueueSize: z.number().int().min(1).default(2048),
        timeoutMs: z.number().int().positive().default(10000),
      })
      .refine((c) => c.maxBatchSize <= c.maxQueueSize, {
        path: ['maxBatchSize'],
        message: 'must not exceed maxQueueSize',
      }),
  {},
);
