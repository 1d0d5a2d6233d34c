import type { Metrics } from '@chain/metrics';
import { StatusError } from '@chain/errors';
import {
  mockTokenResponse,
  RESOURCE_METADATA_PATH,
  resourceMetadataUrl,
  type MockTokenIssuer,
} from '@chain/security';
import type { Stage } from '../exchange.js';
import type { ConfigRevision } from '../config-reload.js';
import type { ReadinessState } from '../readiness.js';
import { JSON_TYPE, readBody, send, sendEmpty, sendJson } from '../respond.js';
import type { SpanExporter } from '../telemetry/span-exporter.js';

const ALLOW = 'GET, HEAD, OPTIONS';
const MAX_FORM_BYTES = 4096;

/** `/health`, `/ready` and `/metrics`: outside the spec and security, not counted. */
export function probesStage(
  serviceId: string,
  metrics: Metrics,
  readiness: () => Promise<ReadinessState>,
  revision: () => ConfigRevision | undefined = () => undefined,
): Stage {
  const health = JSON.stringify({ status: 'UP', serviceId });
  return (x) => {
    const { path } = x;
    if (path !== '/health' && path !== '/ready' && path !== '/metrics') return;
    if (path === '/metrics' && !metrics.enabled) {
      throw new StatusError('ERR20017', [path, 'prometheus.yml enabled: true turns it on']);
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
          const r = revision();
          const gauge = r
            ? `# HELP config_generation The configuration in use: 1 at start, +1 a reload; hash: of its files\n# TYPE config_generation gauge\nconfig_generation{hash="${r.hash}"} ${r.generation}\n`
            : '';
          send(x.res, 200, contentType, body + gauge);
        });
      case 'OPTIONS':
        return sendEmpty(x.res, 204, { Allow: ALLOW });
      default:
        throw new StatusError('ERR10008', [x.method, x.path], { headers: { Allow: ALLOW } });
    }
  };
}

/** RFC 9728 protected-resource metadata, at the path `resourceMetadataUrl` names; no token needed. */
export function resourceMetadataStage(
  at: () => string | undefined,
  document: (resource: string) => object,
): Stage {
  return (x) => {
    if (!x.path.startsWith(RESOURCE_METADATA_PATH)) return;
    const resource = at();
    if (resource === undefined || x.path !== new URL(resourceMetadataUrl(resource)).pathname)
      return;
    if (x.method !== 'GET' && x.method !== 'HEAD') {
      throw new StatusError('ERR10008', [x.method, x.path], { headers: { Allow: 'GET, HEAD' } });
    }
    sendJson(x.res, 200, document(resource));
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

/** A caller's trace is exported when it sampled it (OpenTelemetry's parent-based sampler). */
export function tracingStage(exporter: SpanExporter, now: () => number): Stage {
  return (x) => {
    const { trace } = x.context;
    if (!trace.parentSpanId) trace.sampled = true;
    if (!trace.sampled) return;
    const startMs = now();
    x.res.once('close', () => {
      const route = x.context.operation?.path;
      const status = x.res.statusCode;
      const attributes: Record<string, string | number> = {
        'http.request.method': x.method,
        'url.path': x.path,
        'url.scheme': 'encrypted' in x.req.socket ? 'https' : 'http',
        'http.response.status_code': status,
      };
      if (route) attributes['http.route'] = route;
      exporter.record({
        traceId: trace.traceId,
        spanId: trace.spanId,
        parentSpanId: trace.parentSpanId,
        tracestate: trace.tracestate,
        name: route ? `${x.method} ${route}` : x.method,
        kind: 'server',
        startMs,
        endMs: now(),
        attributes,
        error: status >= 500 || !x.res.writableFinished,
        sampled: true,
        remoteParent: trace.parentSpanId !== undefined,
      });
    });
  };
}

/** security.yml `enableMockJwt`: `POST /oauth2/token` answers a token the service accepts. */
export function mockTokenStage(issuer: MockTokenIssuer): Stage {
  return async (x) => {
    if (x.method !== 'POST' || x.path !== '/oauth2/token') return;
    const body = await readBody(x.req, MAX_FORM_BYTES);
    const isForm = /^application\/x-www-form-urlencoded\b/i.test(
      x.req.headers['content-type'] ?? '',
    );
    const form = new URLSearchParams(isForm ? body.toString('utf8') : '');
    x.res.setHeader('Cache-Control', 'no-store');
    sendJson(x.res, 200, await mockTokenResponse(issuer, form, x.req.headers.authorization));
  };
}
