import { configFile, text, z, type Light4jKey } from '@chain/config';

/** metrics.yml: light-4j's InfluxDB keys, plus `bufferIntervals` and `reportIntervalMs`. */
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
  /** Tests only: when present it wins over `reportInMinutes`. */
  reportIntervalMs?: number;
  /** The most intervals held while InfluxDB does not answer; past it the oldest are dropped. */
  bufferIntervals: number;
}

/** An hour at the default interval (`reportInMinutes: 1`). */
export const DEFAULT_BUFFER_INTERVALS = 60;

/** light-4j's metrics.yml keys this project does not implement. */
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

export const metricsConfigSchema = configFile<MetricsConfig>(
  () =>
    z.strictObject({
      enabled: z.boolean().default(false),
      influxdbProtocol: z.enum(['http', 'https']).default('http'),
      influxdbHost: z.string().min(1).default('localhost'),
      influxdbPort: z.number().int().min(1).max(65535).default(8086),
      influxdbName: z.string().min(1).default('metrics'),
      influxdbUser: text().optional(),
      influxdbPass: text().optional(),
      reportInMinutes: z.number().positive().default(1),
      reportIntervalMs: z.number().int().min(10).optional(),
      bufferIntervals: z.number().int().min(1).default(DEFAULT_BUFFER_INTERVALS),
    }) as z.ZodType<MetricsConfig>,
  {
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
  },
);

/** prometheus.yml (light-4j's prometheus module): `GET /metrics` has its own switch. */
export interface PrometheusConfig {
  enabled: boolean;
  /** Add the process metrics (light-4j's JVM "hotspot" metrics; here Node's, from prom-client). */
  enableHotspot: boolean;
}

export const prometheusConfigSchema = configFile<PrometheusConfig>(
  () =>
    z.strictObject({
      enabled: z.boolean().default(false),
      enableHotspot: z.boolean().default(false),
    }),
  {},
);

export function reportIntervalMsOf(config: MetricsConfig): number {
  return config.reportIntervalMs ?? Math.round(config.reportInMinutes * 60_000);
}
