import type { Metrics } from '@chain/metrics';
import type { Stage } from '../exchange.js';

/** Mounted before anything that can refuse, so refused requests count too. */
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
