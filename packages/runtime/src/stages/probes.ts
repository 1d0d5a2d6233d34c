import type { Metrics } from '@chain/metrics';
import { StatusError } from '@chain/errors';
import type { Stage } from '../exchange.js';
import type { ReadinessState } from '../readiness.js';
import { JSON_TYPE, send, sendEmpty } from '../respond.js';

const ALLOW = 'GET, HEAD, OPTIONS';

/** `/health`, `/ready` and `/metrics`: outside the spec and security, not counted. */
export function probesStage(
  serviceId: string,
  metrics: Metrics,
  readiness: () => Promise<ReadinessState>,
): Stage {
  const health = JSON.stringify({ status: 'UP', serviceId });
  return (x) => {
    const { path } = x;
    if (path !== '/health' && path !== '/ready' && (path !== '/metrics' || !metrics.enabled)) {
      return;
    }
    switch (x.method) {
      case 'GET':
      case 'HEAD':
        if (path === '/health') return send(x.res, 200, JSON_TYPE, health);
        if (path === '/ready') {
          return readiness().then(({ ready, body }) => {
            send(x.res, ready ? 200 : 503, JSON_TYPE, body, { 'Cache-Control': 'no-store' });
          });
        }
        return metrics.prometheus().then(({ contentType, body }) => {
          send(x.res, 200, contentType, body);
        });
      case 'OPTIONS':
        return sendEmpty(x.res, 204, { Allow: ALLOW });
      default:
        throw new StatusError('ERR10008', [x.method, x.path], { headers: { Allow: ALLOW } });
    }
  };
}

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
