import type { Stage } from '../exchange.js';
import type { SpanExporter } from '../telemetry/span-exporter.js';

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
