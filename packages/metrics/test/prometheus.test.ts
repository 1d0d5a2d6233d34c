import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { PrometheusMetrics, RESPONSE_TIME_BUCKETS } from '../src/prometheus.js';

// PrometheusMetrics counts requests in plain numbers and lets prom-client read them at scrape
// time. Its exposition must be what prom-client's own Counter.inc / Histogram.observe on every
// request would give: the reference below is exactly that (the code this class replaced).
class Reference {
  readonly registry = new Registry();
  private readonly counters: Record<string, Counter<'endpoint' | 'clientId'>> = {};
  private readonly histogram: Histogram<'endpoint' | 'clientId'>;

  constructor() {
    const counter = (name: string, help: string) =>
      new Counter({
        name,
        help,
        labelNames: ['endpoint', 'clientId'],
        registers: [this.registry],
      });
    this.counters.request = counter('requests_total', 'Total requests.');
    this.counters.success = counter('success_total', 'Total success (2xx-3xx) requests.');
    this.counters.auth_error = counter('auth_error_total', 'Total auth error (401, 403) requests.');
    this.counters.request_error = counter(
      'request_error_total',
      'Total request error (other 4xx) requests.',
    );
    this.counters.server_error = counter(
      'server_error_total',
      'Total server error (5xx) requests.',
    );
    this.histogram = new Histogram({
      name: 'response_time_seconds',
      help: 'Response time in seconds.',
      labelNames: ['endpoint', 'clientId'],
      registers: [this.registry],
    });
  }

  record(endpoint: string, clientId: string, statusCode: number, elapsedMs: number): void {
    const labels = { endpoint, clientId };
    this.counters.request.inc(labels);
    const outcome =
      statusCode >= 200 && statusCode < 400
        ? 'success'
        : statusCode === 401 || statusCode === 403
          ? 'auth_error'
          : statusCode >= 400 && statusCode < 500
            ? 'request_error'
            : statusCode >= 500
              ? 'server_error'
              : undefined;
    if (outcome) this.counters[outcome].inc(labels);
    this.histogram.observe(labels, elapsedMs / 1000);
  }
}

type Sample = [endpoint: string, clientId: string, status: number, ms: number];

function both(samples: Sample[]) {
  const ours = new PrometheusMetrics(false);
  const reference = new Reference();
  for (const [e, c, s, ms] of samples) {
    ours.record(e, c, s, ms);
    reference.record(e, c, s, ms);
  }
  return { ours, reference };
}

/** Each bound exactly, just above it, zero, above the largest bound, fractions. */
const EDGE_TIMES_MS = [
  0,
  ...RESPONSE_TIME_BUCKETS.flatMap((b) => [b * 1000, b * 1000 + 0.001]),
  12_345.6,
  0.37,
];

describe('PrometheusMetrics exposition', () => {
  it('is prom-client’s own text, byte for byte, for requests in every bucket and outcome', async () => {
    // Every outcome appears first in the first series, so prom-client's order of label sets
    // (first inc of each) is the order of first requests, as ours.
    const samples: Sample[] = [];
    const statuses = [200, 302, 401, 403, 404, 400, 500, 503, 100];
    EDGE_TIMES_MS.forEach((ms, i) => {
      samples.push(['/v1/data@get', 'api_a', statuses[i % statuses.length], ms]);
    });
    statuses.forEach((status, i) => samples.push(['/v1/data@get', 'api_b', status, i * 7.3]));
    samples.push(['/v2/pet/{petId}@get', 'unknown', 404, 1.5]);
    const { ours, reference } = both(samples);
    expect((await ours.render()).body).toBe(await reference.registry.metrics());
    expect(await ours.registry.getMetricsAsJSON()).toEqual(
      await reference.registry.getMetricsAsJSON(),
    );
    expect((await ours.render()).contentType).toBe(reference.registry.contentType);
  });

  it('has the same lines as prom-client for requests in any order (label values escaped)', async () => {
    // A fixed pseudo-random sequence: series and outcomes first seen in any order.
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const endpoints = ['/v1/data@get', '/v1/data@post', 'unknown', '/a"b\\c\nd@get'];
    const clients = ['api_a', 'api_b', 'unknown', 'cli"ent'];
    const statuses = [200, 201, 304, 401, 403, 404, 409, 500, 502, 101];
    const samples: Sample[] = Array.from({ length: 2000 }, () => [
      endpoints[Math.floor(next() * endpoints.length)],
      clients[Math.floor(next() * clients.length)],
      statuses[Math.floor(next() * statuses.length)],
      next() < 0.1 ? EDGE_TIMES_MS[Math.floor(next() * EDGE_TIMES_MS.length)] : next() * 3000,
    ]);
    const { ours, reference } = both(samples);
    const blocks = (text: string) =>
      text
        .trim()
        .split('\n\n')
        .map((block) => {
          const [help, type, ...lines] = block.split('\n');
          return { help, type, lines: lines.sort() };
        });
    const expected = blocks(await reference.registry.metrics());
    expect(blocks((await ours.render()).body)).toEqual(expected);
    // The sums above are equal, not merely close: the same additions in the same order. And
    // every one of the 16 series has its 11 buckets, +Inf, sum and count.
    expect(expected.find((b) => b.type.endsWith('histogram'))!.lines.length).toBe(
      endpoints.length * clients.length * (RESPONSE_TIME_BUCKETS.length + 3),
    );
  });

  it('sums across worker processes as prom-client’s AggregatorRegistry sums its own metrics', async () => {
    const a = both([
      ['/v1/data@get', 'api_a', 200, 3],
      ['/v1/data@get', 'api_a', 500, 70],
      ['/v1/data@get', 'api_b', 401, 0.2],
    ]);
    const b = both([
      ['/v1/data@get', 'api_b', 401, 1],
      ['/v1/data@get', 'api_a', 200, 20_000],
    ]);
    const ours = AggregatorRegistry.aggregate([
      await a.ours.registry.getMetricsAsJSON(),
      await b.ours.registry.getMetricsAsJSON(),
    ]);
    const reference = AggregatorRegistry.aggregate([
      await a.reference.registry.getMetricsAsJSON(),
      await b.reference.registry.getMetricsAsJSON(),
    ]);
    const text = await ours.metrics();
    expect(text).toBe(await reference.metrics());
    expect(text).toContain('requests_total{endpoint="/v1/data@get",clientId="api_a"} 3');
    expect(text).toContain(
      'response_time_seconds_bucket{le="+Inf",endpoint="/v1/data@get",clientId="api_a"} 3',
    );
  });

  it('shows nothing of the requests before any, and nothing after the registry is reset', async () => {
    const ours = new PrometheusMetrics(false);
    const empty = (await ours.render()).body;
    expect(empty).toBe(await new Reference().registry.metrics());
    expect(empty).not.toContain('endpoint=');
    ours.record('/v1/data@get', 'api_a', 200, 5);
    expect((await ours.render()).body).toContain(
      'requests_total{endpoint="/v1/data@get",clientId="api_a"} 1',
    );
    ours.registry.resetMetrics();
    expect((await ours.render()).body).toBe(empty);
    ours.record('/v1/data@get', 'api_a', 404, 5);
    const after = (await ours.render()).body;
    expect(after).toContain('requests_total{endpoint="/v1/data@get",clientId="api_a"} 1');
    expect(after).toContain('request_error_total{endpoint="/v1/data@get",clientId="api_a"} 1');
    expect(after).not.toContain('success_total{');
  });

  it('keeps the process metrics beside the request metrics when asked to', async () => {
    const ours = new PrometheusMetrics(true);
    ours.record('/v1/data@get', 'api_a', 200, 5);
    const text = (await ours.render()).body;
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain(
      'response_time_seconds_count{endpoint="/v1/data@get",clientId="api_a"} 1',
    );
  });
});
