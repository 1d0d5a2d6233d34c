import { configFile, text, z, type Light4jKey } from '@chain/config';

const LIGHT4J_KEYS: Record<string, Light4jKey> = {
  enableJVMMonitor: {
    same: false,
    note: 'process metrics are on /metrics (prometheus.yml enableHotspot)',
  },
  serverPath: { note: "used by light-4j's APM reporter only" },
  productName: { note: 'no product tag is sent' },
  sendScopeClientId: { same: false },
  sendCallerId: { same: false },
  sendIssuer: { same: false },
  issuerRegex: { note: 'no issuer tag is sent' },
};

const metricsShape = z.strictObject({
  enabled: z.boolean().default(false),
  influxdbProtocol: z.enum(['http', 'https']).default('http'),
  influxdbHost: z.string().min(1).default('localhost'),
  influxdbPort: z.number().int().min(1).max(65535).default(8086),
  influxdbName: z.string().min(1).default('metrics'),
  influxdbUser: text().optional(),
  influxdbPass: text().optional(),
  reportInMinutes: z.number().positive().default(1),
  reportIntervalMs: z.number().int().min(10).optional(),
  // An hour at the default interval.
  bufferIntervals: z.number().int().min(1).default(60),
});
export type MetricsConfig = z.output<typeof metricsShape>;

export const metricsConfigSchema = configFile(() => metricsShape, {
  light4j: LIGHT4J_KEYS,
  // light-4j's newer names of the same keys.
  aliases: {
    serverProtocol: 'influxdbProtocol',
    serverHost: 'influxdbHost',
    serverPort: 'influxdbPort',
    serverName: 'influxdbName',
    serverUser: 'influxdbUser',
    serverPass: 'influxdbPass',
  },
});

/** prometheus.yml (light-4j's prometheus module). */
const prometheusShape = z.strictObject({
  enabled: z.boolean().default(false),
  enableHotspot: z.boolean().default(false),
});
export type PrometheusConfig = z.output<typeof prometheusShape>;

export const prometheusConfigSchema = configFile(() => prometheusShape, {});

export function reportIntervalMsOf(config: MetricsConfig): number {
  return config.reportIntervalMs ?? Math.round(config.reportInMinutes * 60_000);
}
