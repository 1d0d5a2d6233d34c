import type { Metrics } from '@chain/metrics';
import { StatusError } from '@chain/security';
import type { Stage } from '../exchange';
import { JSON_TYPE, send, sendEmpty } from '../respond';

const ALLOW = 'GET, HEAD, OPTIONS';

/**
 * The service's own probes, outside the spec and security and not counted by metrics:
 * `/health`, and `/metrics` (Prometheus) when prometheus.yml (or, without it, metrics.yml) enables it. GET and HEAD answer,
 * OPTIONS lists them, any other method is 405 with `Allow`.
 */
export function probesStage(serviceId: string, metrics: Metrics): Stage {
  const health = JSON.stringify({ status: 'UP', serviceId });
  return (x) => {
    const isHealth = x.path === '/health';
    if (!isHealth && !(metrics.servesPrometheus && x.path === '/metrics')) return;
    switch (x.method) {
      case 'GET':
      case 'HEAD':
        if (isHealth) return send(x.res, 200, JSON_TYPE, health);
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
