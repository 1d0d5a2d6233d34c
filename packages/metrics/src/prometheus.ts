import { Counter, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { COUNTERS, outcomeOf, zeroCounts, type CounterName, type Outcome } from './outcome';
import { SeriesTable } from './series-table';

type LabelName = 'endpoint' | 'clientId';
type Labels = Readonly<Record<LabelName, string>>;

/** prom-client's default buckets of a histogram, in seconds. */
export const RESPONSE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** The requests of one endpoint and client since the start: what `/metrics` shows of them. */
interface Series {
  labels: Labels;
  counts: Record<CounterName, number>;
  /** Requests per bucket (not cumulative); the last slot is above the largest bound. */
  buckets: number[];
  sum: number;
}

/** light-4j's Prometheus names of the request counters, and their help. */
const COUNTER_METRICS: Record<CounterName, { name: string; help: string }> = {
  request: { name: 'requests_total', help: 'Total requests.' },
  success: { name: 'success_total', help: 'Total success (2xx-3xx) requests.' },
  auth_error: { name: 'auth_error_total', help: 'Total auth error (401, 403) requests.' },
  request_error: {
    name: 'request_error_total',
    help: 'Total request error (other 4xx) requests.',
  },
  server_error: { name: 'server_error_total', help: 'Total server error (5xx) requests.' },
};

/**
 * The Prometheus face of the same figures, named as light-4j's Prometheus handler names them:
 * `requests_total` and one `<outcome>_total` counter per outcome, and the
 * `response_time_seconds` histogram, each labelled by endpoint and clientId; plus, unless told
 * not to, the default process metrics. One registry per instance, so several apps in one
 * process never clash.
 *
 * A request adds to plain numbers of its series (a few increments and a bucket found among
 * eleven); prom-client's metrics read them when `/metrics` is asked for. Feeding prom-client's
 * `Counter.inc` and `Histogram.observe` on every request instead builds a label key string per
 * call and looks it up as a property: about 1 µs a request (22-35 ns now), and V8's work on those
 * strings (interning, hashing) elsewhere in the process (README, "Why the request figures are
 * counted here"). The exposition text and the JSON the workers' aggregation reads are
 * prom-client's own, byte for byte (test/prometheus.test.ts compares the two).
 */
export class PrometheusMetrics {
  readonly registry = new Registry();
  /** The series, in the order first seen (the order of the histogram's exposition). */
  private readonly table = new SeriesTable<Series>((endpoint, clientId) => ({
    labels: { endpoint, clientId },
    counts: zeroCounts(),
    buckets: new Array<number>(RESPONSE_TIME_BUCKETS.length + 1).fill(0),
    sum: 0,
  }));
  /**
   * Per outcome, the series in the order they first counted one (prom-client's order); for
   * `requests_total` that order is the table's own.
   */
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
        ...COUNTER_METRICS[name],
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

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** One value of a metric as prom-client's registry formats it (a histogram's shape). */
interface MetricValue {
  labels: Record<string, string | number>;
  sharedLabels?: Labels;
  value: number;
  metricName: string;
  /** prom-client's: null for a bucket, undefined for the sum and the count. */
  exemplar: null | undefined;
}

/**
 * `response_time_seconds` as prom-client's registry reads a histogram: `getForPromString` for
 * the text (bucket bound, then the series' labels), `get` for the JSON that prom-client's
 * AggregatorRegistry sums across worker processes, with the same values and names.
 */
function responseTimeHistogram(series: readonly Series[], reset: () => void) {
  const name = 'response_time_seconds';
  const bounds: readonly (number | '+Inf')[] = [...RESPONSE_TIME_BUCKETS, '+Inf'];
  const values = (): MetricValue[] => {
    const out: MetricValue[] = [];
    for (const s of series) {
      const value = (
        suffix: string,
        labels: MetricValue['labels'],
        v: number,
        exemplar: null | undefined,
      ) =>
        out.push({ labels, sharedLabels: s.labels, value: v, metricName: name + suffix, exemplar });
      // Cumulative counts per bound, the last (+Inf) the series' count.
      let count = 0;
      bounds.forEach((le, i) => {
        count += s.buckets[i];
        value('_bucket', { le }, count, null);
      });
      value('_sum', {}, s.sum, undefined);
      value('_count', {}, count, undefined);
    }
    return out;
  };
  const head = { name, help: 'Response time in seconds.', type: 'histogram', aggregator: 'sum' };
  const metric = (vals: MetricValue[]) => ({ ...head, values: vals });
  return {
    ...head,
    getForPromString: async () => metric(values()),
    // prom-client's Histogram.get: each value's labels with the shared ones folded in.
    get: async () =>
      metric(
        values().map(({ sharedLabels, labels, ...rest }) => ({
          ...rest,
          labels: { ...labels, ...sharedLabels },
        })),
      ),
    reset,
  };
}
