import { configFile, mapOf, text, z } from '@chain/config';

/** telemetry.yml (ours; light-4j has none): off by default, and free when off. */
const telemetrySchema = z
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
  });

export type TelemetryConfig = z.output<typeof telemetrySchema>;

export const telemetryConfigSchema = configFile(() => telemetrySchema, {});
