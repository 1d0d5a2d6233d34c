import { z, type SchemaFactory } from '@chain/config';

/**
 * metrics.yml: light-4j's keys, plus `reportIntervalMs` (docs/configuration.md).
 *
 * `reportIntervalMs` (integer, milliseconds, optional) is for tests only: when present it wins
 * over `reportInMinutes`, so a test can report every second without changing what
 * `reportInMinutes` means. Leave it out in a real deployment.
 */
export interface MetricsConfig {
  enabled: boolean;
  influxdbProtocol: 'http' | 'https';
  influxdbHost: string;
  influxdbPort: number;
  influxdbName: string;
  influxdbUser?: string;
  /** Never logged. */
  influxdbPass?: string;
  reportInMinutes: number;
  reportIntervalMs?: number;
}

/** A user name or password that YAML (or `${ENV}`) typed as a number is still text. */
const text = () =>
  z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string()).optional();

export const metricsConfigSchema: SchemaFactory<MetricsConfig> = () =>
  z.strictObject({
    enabled: z.boolean().default(false),
    influxdbProtocol: z.enum(['http', 'https']).default('http'),
    influxdbHost: z.string().min(1).default('localhost'),
    influxdbPort: z.number().int().min(1).max(65535).default(8086),
    influxdbName: z.string().min(1).default('metrics'),
    influxdbUser: text(),
    influxdbPass: text(),
    reportInMinutes: z.number().positive().default(1),
    reportIntervalMs: z.number().int().min(10).optional(),
  }) as z.ZodType<MetricsConfig>;

/** The reporting interval in milliseconds: `reportIntervalMs` when present, else the minutes. */
export function reportIntervalMsOf(config: MetricsConfig): number {
  return config.reportIntervalMs ?? Math.round(config.reportInMinutes * 60_000);
}
