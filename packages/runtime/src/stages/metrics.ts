import type { Metrics } from '@chain/metrics';
import type { Stage } from '../exchange';

/**
 * Counts every request when its response finishes, under the endpoint the routing stage found
 * and the client the security stage verified (`unknown` for either when there is none), so
 * requests the spec or security refuse count too. Mounted before anything that can refuse.
 */
export function metricsStage(metrics: Metrics): Stage {
  return (x) => {
    const startedAt = metrics.now();
    // `finish` comes once per response: `on` spares the wrapper `once` makes per request.
    x.res.on('finish', () =>
      metrics.record({
        endpoint: x.context.operation?.endpoint ?? 'unknown',
        clientId: x.context.caller?.clientId ?? 'unknown',
        statusCode: x.res.statusCode,
        startedAt,
      }),
    );
  };
}
