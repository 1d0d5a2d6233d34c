import { escape, type IPoint } from 'influx';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { PointContext } from './influx-points';
import { combine, emptyTimer, observe, type Timer } from './timer';

/**
 * What a service's client side reports (tokens, keys, downstream calls), counted here. The
 * method names and arguments are `@chain/oauth-client`'s ClientEvents (this package does not
 * depend on it: the runtime hands one to the other).
 */
export interface ClientMetrics {
  tokenRenewed(event: { clientId: string; trigger: string; ms: number }): void;
  tokenRenewalFailed(event: { clientId: string; trigger: string; cause: string }): void;
  tokenWaited(event: { clientId: string; ms: number; ok: boolean }): void;
  keyFetched(event: { outcome: string }): void;
  circuitChanged(event: { downstream: string; state: string; previous: string }): void;
  circuitRejected(event: { downstream: string }): void;
  downstreamRetried(event: { downstream: string; reason: string }): void;
}

/** A circuit's state as a number: what the `circuit_state` gauge holds. */
export const CIRCUIT_STATE_VALUE: Record<string, number> = { closed: 0, half_open: 1, open: 2 };

type Tags = Record<string, string>;
export interface Series<T> {
  name: string;
  tags: Tags;
  value: T;
}
export type { Timer } from './timer';

/** One interval of a ClientStats as plain data (it crosses the IPC channel of a cluster). */
export interface ClientSnapshot {
  counters: Series<number>[];
  timers: Series<Timer>[];
  gauges: Series<number>[];
}

/**
 * The client-side figures of one reporting interval, in light-4j's InfluxDB naming (service
 * view `<serviceId>.<metric>.<suffix>`): counters `.count` (reset each interval, a series once
 * seen reported with 0), the token wait timer `.min` `.max` `.mean` in ms (intervals with
 * waits only), and the `circuit_state` gauge (no suffix, as light-4j's reporter writes gauges).
 */
export class ClientStats {
  private readonly counters = new Map<string, Series<number>>();
  private readonly timers = new Map<string, Series<Timer>>();
  private readonly gauges = new Map<string, Series<number>>();

  count(name: string, tags: Tags): void {
    this.add(name, tags, 1);
  }

  time(name: string, tags: Tags, ms: number): void {
    observe(this.timer(name, tags), ms);
  }

  gauge(name: string, tags: Tags, value: number): void {
    this.gauges.set(keyOf(name, tags), { name, tags, value });
  }

  /**
   * The interval as plain data (what a worker hands to the primary); counters and timers start
   * again from zero.
   */
  take(): ClientSnapshot {
    const counters: ClientSnapshot['counters'] = [];
    for (const series of this.counters.values()) {
      counters.push({ name: series.name, tags: series.tags, value: series.value });
      series.value = 0;
    }
    const timers: ClientSnapshot['timers'] = [];
    for (const series of this.timers.values()) {
      if (series.value.count > 0) timers.push({ ...series, value: series.value });
      series.value = emptyTimer();
    }
    const gauges = [...this.gauges.values()].map((series) => ({ ...series }));
    return { counters, timers, gauges };
  }

  /**
   * Adds another process's interval (a worker's `take()`) to this one: counters add up, timers
   * combine, a gauge takes the value last reported.
   */
  merge(snapshot: ClientSnapshot): void {
    for (const { name, tags, value } of snapshot.counters) this.add(name, tags, value);
    for (const { name, tags, value } of snapshot.timers) combine(this.timer(name, tags), value);
    for (const { name, tags, value } of snapshot.gauges) this.gauge(name, tags, value);
  }

  private add(name: string, tags: Tags, value: number): void {
    const key = keyOf(name, tags);
    const series = this.counters.get(key);
    if (series) series.value += value;
    else this.counters.set(key, { name, tags, value });
  }

  private timer(name: string, tags: Tags): Timer {
    const key = keyOf(name, tags);
    let series = this.timers.get(key);
    if (!series) {
      series = { name, tags, value: emptyTimer() };
      this.timers.set(key, series);
    }
    return series.value;
  }

  /** The interval as InfluxDB points; counters and timers start again from zero. */
  drain(context: PointContext, timestamp: number): IPoint[] {
    const { serviceId, hostname, ipAddress } = context;
    const points: IPoint[] = [];
    const add = (measurement: string, tags: Tags, value: number) =>
      points.push({
        measurement: escape.measurement(`${serviceId}.${measurement}`),
        tags: { ...tags, hostname, ipAddress },
        fields: { value },
        timestamp,
      });
    for (const series of this.counters.values()) {
      add(`${series.name}.count`, series.tags, series.value);
      series.value = 0;
    }
    for (const series of this.timers.values()) {
      const t = series.value;
      if (t.count === 0) continue;
      add(`${series.name}.min`, series.tags, t.min);
      add(`${series.name}.max`, series.tags, t.max);
      add(`${series.name}.mean`, series.tags, t.sum / t.count);
      series.value = emptyTimer();
    }
    for (const series of this.gauges.values()) add(series.name, series.tags, series.value);
    return points;
  }
}

function keyOf(name: string, tags: Tags): string {
  let key = name;
  for (const [k, v] of Object.entries(tags)) key += `\u0000${k}=${v}`;
  return key;
}

/** The same figures for Prometheus, never reset. */
export class ClientPrometheus {
  private readonly renewals: Counter<'clientId' | 'trigger'>;
  private readonly renewalErrors: Counter<'clientId' | 'trigger' | 'cause'>;
  private readonly waits: Counter<'clientId' | 'outcome'>;
  private readonly waitSeconds: Histogram<'clientId'>;
  private readonly keyFetches: Counter<'outcome'>;
  private readonly circuitOpened: Counter<'downstream'>;
  private readonly circuitRejected: Counter<'downstream'>;
  private readonly circuitState: Gauge<'downstream'>;
  private readonly retries: Counter<'downstream' | 'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.renewals = new Counter({
      name: 'token_renewals_total',
      help: 'Tokens obtained from the token server, by client and what made them due.',
      labelNames: ['clientId', 'trigger'],
      registers,
    });
    this.renewalErrors = new Counter({
      name: 'token_renewal_errors_total',
      help: 'Failed token requests, by client, trigger and cause.',
      labelNames: ['clientId', 'trigger', 'cause'],
      registers,
    });
    this.waits = new Counter({
      name: 'token_waits_total',
      help: 'Calls that waited for a token (none at hand), by client and outcome.',
      labelNames: ['clientId', 'outcome'],
      registers,
    });
    this.waitSeconds = new Histogram({
      name: 'token_wait_seconds',
      help: 'How long calls waited for a token.',
      labelNames: ['clientId'],
      registers,
    });
    this.keyFetches = new Counter({
      name: 'key_fetches_total',
      help: 'Look-ups at the key distribution server, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    this.circuitOpened = new Counter({
      name: 'circuit_opened_total',
      help: 'Times a downstream circuit opened.',
      labelNames: ['downstream'],
      registers,
    });
    this.circuitRejected = new Counter({
      name: 'circuit_rejected_total',
      help: 'Calls refused at once by an open downstream circuit.',
      labelNames: ['downstream'],
      registers,
    });
    this.circuitState = new Gauge({
      name: 'circuit_state',
      help: 'A downstream circuit: 0 closed, 1 half-open, 2 open.',
      labelNames: ['downstream'],
      registers,
    });
    this.retries = new Counter({
      name: 'downstream_retries_total',
      help: 'Downstream calls sent a second time, by reason.',
      labelNames: ['downstream', 'reason'],
      registers,
    });
  }

  renewed(clientId: string, trigger: string): void {
    this.renewals.inc({ clientId, trigger });
  }
  renewalFailed(clientId: string, trigger: string, cause: string): void {
    this.renewalErrors.inc({ clientId, trigger, cause });
  }
  waited(clientId: string, ms: number, ok: boolean): void {
    this.waits.inc({ clientId, outcome: ok ? 'ok' : 'timeout' });
    this.waitSeconds.observe({ clientId }, ms / 1000);
  }
  keyFetched(outcome: string): void {
    this.keyFetches.inc({ outcome });
  }
  circuit(downstream: string, state: string): void {
    if (state === 'open') this.circuitOpened.inc({ downstream });
    this.circuitState.set({ downstream }, CIRCUIT_STATE_VALUE[state] ?? 0);
  }
  rejected(downstream: string): void {
    this.circuitRejected.inc({ downstream });
  }
  retried(downstream: string, reason: string): void {
    this.retries.inc({ downstream, reason });
  }
}

/** The ClientMetrics of a service: into the interval (InfluxDB) and Prometheus, as switched on. */
export function clientMetrics(
  stats: ClientStats | undefined,
  prometheus: ClientPrometheus | undefined,
): ClientMetrics {
  return {
    tokenRenewed: ({ clientId, trigger }) => {
      stats?.count('token_renewal', { clientId, trigger });
      prometheus?.renewed(clientId, trigger);
    },
    tokenRenewalFailed: ({ clientId, trigger, cause }) => {
      stats?.count('token_renewal_error', { clientId, trigger, cause });
      prometheus?.renewalFailed(clientId, trigger, cause);
    },
    tokenWaited: ({ clientId, ms, ok }) => {
      stats?.count('token_wait', { clientId, outcome: ok ? 'ok' : 'timeout' });
      stats?.time('token_wait_time', { clientId }, ms);
      prometheus?.waited(clientId, ms, ok);
    },
    keyFetched: ({ outcome }) => {
      stats?.count('key_fetch', { outcome });
      prometheus?.keyFetched(outcome);
    },
    circuitChanged: ({ downstream, state }) => {
      if (state === 'open') stats?.count('circuit_open', { downstream });
      stats?.gauge('circuit_state', { downstream }, CIRCUIT_STATE_VALUE[state] ?? 0);
      prometheus?.circuit(downstream, state);
    },
    circuitRejected: ({ downstream }) => {
      stats?.count('circuit_rejected', { downstream });
      prometheus?.rejected(downstream);
    },
    downstreamRetried: ({ downstream, reason }) => {
      stats?.count('downstream_retry', { downstream, reason });
      prometheus?.retried(downstream, reason);
    },
  };
}
