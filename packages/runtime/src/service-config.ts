import { ConfigLoader, type ConfigLoaderOptions } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { OpenApiSpec } from '@chain/openapi';
import { clientConfigSchema, secretConfigSchema } from '@chain/oauth-client';
import { metricsConfigSchema, prometheusConfigSchema } from '@chain/metrics';
import { securityConfigSchema } from '@chain/security';
import { serverConfigSchema } from './server-config.js';
import { telemetryConfigSchema } from './telemetry/telemetry-config.js';
import { limitConfigSchema } from './limits/limit-config.js';
import { configReloadSchema, type ConfigRevision } from './config-reload.js';

export type ServiceConfig = ReturnType<typeof loadServiceConfig>;

export function loadServiceConfig(options: ConfigLoaderOptions) {
  const loader = new ConfigLoader(options);
  const server = loader.load('server', serverConfigSchema, { required: true });
  // light-rest-4j reads openapi-security.yml instead of security.yml when there is one.
  const security = loader.load(['openapi-security', 'security'], securityConfigSchema);
  const client = loader.load('client', clientConfigSchema);
  const secret = loader.load('secret', secretConfigSchema);
  const metrics = loader.load('metrics', metricsConfigSchema);
  const prometheus = loader.load('prometheus', prometheusConfigSchema);
  const telemetry = loader.load('telemetry', telemetryConfigSchema);
  const limit = loader.load('limit', limitConfigSchema);
  const configReload = loader.load('configReload', configReloadSchema);
  const { source, value } = loader.raw('openapi');
  if (value === undefined) {
    throw new ConfigError(`${loader.bundledDir}/openapi.yaml`, undefined, 'file not found');
  }
  const spec = new OpenApiSpec(value, source.file);
  // Set by startService: what /ready and /metrics report, and the reload.
  const revision = undefined as ConfigRevision | undefined;
  return {
    ...{ server, security, client, secret, metrics, prometheus, telemetry, limit, configReload },
    ...{ spec, loader, revision },
  };
}
