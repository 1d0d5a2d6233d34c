import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { outcomeOf, type Outcome } from './outcome';

const LABELS = ['endpoint', 'clientId'] as const;

/**
 * The Prometheus face of the same figures, named as light-4j's Prometheus handler names them:
 * `requests_total` and one `<outcome>_total` counter per outcome, and the
 * `response_time_seconds` histogram, each labelled by endpoint and clientId; plus, unless told
 * not to, the default process metrics. One registry per instance, so several apps in one
 * process never clash.
 */
export class PrometheusMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<(typeof LABELS)[number]>;
  private readonly outcomes: Record<Outcome, Counter<(typeof LABELS)[number]>>;
  private readonly responseTime: Histogram<(typeof LABELS)[number]>;

  constructor(processMetrics = true) {
    const counter = (name: string, help: string) =>
      new Counter({ name, help, labelNames: LABELS, registers: [this.registry] });
    this.requests = counter('requests_total', 'Total requests.');
    this.outcomes = {
      success: counter('success_total', 'Total success (2xx-3xx) requests.'),
      auth_error: counter('auth_error_total', 'Total auth error (401, 403) requests.'),
      request_error: counter('request_error_total', 'Total request error (other 4xx) requests.'),
      server_error: counter('server_error_total', 'Total server error (5xx) requests.'),
    };
    this.responseTime = new Histogram({
      name: 'response_time_seconds',
      help: 'Response time in seconds.',
      labelNames: LABELS,
      registers: [this.registry],
    });
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** One labels object per endpoint and client, made once (a request allocates none). */
  private readonly labels = new Map<string, Map<string, Record<(typeof LABELS)[number], string>>>();

  record(endpoint: string, clientId: string, statusCode: number, elapsedMs: number): void {
    let byClient = this.labels.get(endpoint);
    if (!byClient) {
      byClient = new Map();
      this.labels.set(endpoint, byClient);
    }
    let labels = byClient.get(clientId);
    if (!labels) {
      labels = { endpoint, clientId };
      byClient.set(clientId, labels);
    }
    this.requests.inc(labels);
    const outcome = outcomeOf(statusCode);
    if (outcome) this.outcomes[outcome].inc(labels);
    this.responseTime.observe(labels, elapsedMs / 1000);
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
