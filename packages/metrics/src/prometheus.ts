import { Counter, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { COUNTERS, outcomeOf, zeroCounts, type CounterName, type Outcome } from './outcome.js';
import { SeriesTable } from './series-table.js';

type LabelName = 'endpoint' | 'clientId';
type Labels = Readonly<Record<LabelName, string>>;

/** prom-client's default buckets of a histogram, in seconds. */
export const RESPONSE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

interface Series {
  labels: Labels;
  counts: Record<CounterName, number>;
  /** Requests per bucket (not cumulative); the last slot is above the largest bound. */
  buckets: number[];
  sum: number;
}

const COUNTER_METRICS: Record<CounterName, [name: string, help: string]> = {
  request: ['requests_total', 'Total requests.'],
  success: ['success_total', 'Total success (2xx-3xx) requests.'],
  auth_error: ['auth_error_total', 'Total auth error (401, 403) requests.'],
  request_error: ['request_error_total', 'Total request error (other 4xx) requests.'],
  server_error: ['server_error_total', 'Total server error (5xx) requests.'],
};

/**
 * A request adds to plain numbers of its series, which prom-client's metrics read at scrape time
 * (README, "Why the request figures are counted here"): prom-client's own text, byte for byte.
 */
export class PrometheusMetrics {
  readonly registry = new Registry();
  private refusedCounter?: Counter<'reason'>;
  private readonly table = new SeriesTable<Series>((endpoint, clientId) => ({
    labels: { endpoint, clientId },
    counts: zeroCounts(),
    buckets: new Array<number>(RESPONSE_TIME_BUCKETS.length + 1).fill(0),
    sum: 0,
  }));
  /** Per outcome, the series in the order they first counted one (prom-client's order). */
  private readonly counted: Record<Outcome, Series[]> = {
    success: [],
    auth_error: [],
    request_error: [],
    server_error: [],
  };

  constructor(processMetrics = true) {
    for (const name of COUNTERS) {
      const series = name === 'request' ? this.table.all : this.counted[name];
      new Counter<LabelName>({
        name: COUNTER_METRICS[name][0],
        help: COUNTER_METRICS[name][1],
        labelNames: ['endpoint', 'clientId'],
        registers: [this.registry],
        // Read when /metrics is asked for: the counts so far, a series only once it has one.
        collect() {
          this.reset();
          for (const s of series) this.inc(s.labels, s.counts[name]);
        },
      });
    }
    const histogram = responseTimeHistogram(this.table.all, () => {
      // The registry's resetMetrics: every request figure back to none.
      this.table.clear();
      for (const list of Object.values(this.counted)) list.length = 0;
    });
    this.registry.registerMetric(histogram as unknown as Metric);
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  record(endpoint: string, clientId: string, statusCode: number, elapsedMs: number): void {
    const entry = this.table.get(endpoint, clientId);
    entry.counts.request += 1;
    const outcome = outcomeOf(statusCode);
    if (outcome && entry.counts[outcome]++ === 0) this.counted[outcome].push(entry);
    const seconds = elapsedMs / 1000;
    entry.sum += seconds;
    // prom-client's rule: the first bound the value is not above (else only +Inf).
    let i = 0;
    while (i < RESPONSE_TIME_BUCKETS.length && seconds > RESPONSE_TIME_BUCKETS[i]) i++;
    entry.buckets[i] += 1;
  }

  /** Refused by limit.yml before their work: registered at the first, so /metrics is unchanged. */
  refused(reason: 'rate_limit' | 'overload'): void {
    this.refusedCounter ??= new Counter({
      name: 'refused_total',
      help: 'Requests refused by a rate limit (429) or shed under overload (503).',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    this.refusedCounter.inc({ reason });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * `response_time_seconds` as prom-client's Histogram.get gives it, which the registry renders
 * (labels in the order `le`, then the series') and AggregatorRegistry sums across workers.
 */
function responseTimeHistogram(series: readonly Series[], reset: () => void) {
  const name = 'response_time_seconds';
  const bounds: readonly (number | '+Inf')[] = [...RESPONSE_TIME_BUCKETS, '+Inf'];
  const head = { name, help: 'Response time in seconds.', type: 'histogram', aggregator: 'sum' };
  const values = () =>
    series.flatMap(({ labels, buckets, sum }) => {
      // prom-client's exemplar: null for a bucket, undefined for the sum and the count.
      const value = (suffix: string, v: number, le?: number | '+Inf') => ({
        labels: le === undefined ? { ...labels } : { le, ...labels },
        value: v,
        metricName: name + suffix,
        exemplar: le === undefined ? undefined : null,
      });
      // Cumulative counts per bound, the last (+Inf) the series' count.
      let count = 0;
      return [
        ...bounds.map((le, i) => value('_bucket', (count += buckets[i]), le)),
        value('_sum', sum),
        value('_count', count),
      ];
    });
  return { ...head, get: async () => ({ ...head, values: values() }), reset };
}
