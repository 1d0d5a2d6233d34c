import { z, type SchemaFactory } from '@chain/config';

/** metrics.yml, keys of SPEC.md section 2. */
export interface MetricsConfig {
  enabled: boolean;
  influxdbProtocol: 'http' | 'https';
  influxdbHost: string;
  influxdbPort: number;
  influxdbName: string;
  influxdbUser?: string;
  influxdbPass?: string;
  reportInMinutes: number;
}

export const metricsConfigSchema: SchemaFactory<MetricsConfig> = () =>
  z.strictObject({
    enabled: z.boolean().default(false),
    influxdbProtocol: z.enum(['http', 'https']).default('http'),
    influxdbHost: z.string().default('localhost'),
    influxdbPort: z.number().int().min(1).max(65535).default(8086),
    influxdbName: z.string().default('metrics'),
    influxdbUser: z.string().optional(),
    influxdbPass: z.string().optional(),
    reportInMinutes: z.number().positive().default(1),
  });
