import type { ClientEvents } from '@chain/oauth-client';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { emptyTimer, observe, type Timer } from './timer.js';

const CIRCUIT_STATE_VALUE: Record<string, number> = { closed: 0, half_open: 1, open: 2 };

type Tags = Record<string, string>;

export interface Series<T> {
  name: string;
  tags: Tags;
  value: T;
}

/** One interval of a ClientStats as plain data (it crosses the IPC channel of a cluster). */
export interface ClientSnapshot {
  counters: Series<number>[];
  timers: Series<Timer>[];
  gauges: Series<number>[];
}

export class ClientStats {
  private readonly counters = new Map<string, Series<number>>();
  private readonly timers = new Map<string, Series<Timer>>();
  private readonly gauges = new Map<string, Series<number>>();

  count(name: string, tags: Tags, value = 1): void {
    this.series(this.counters, name, tags, () => 0).value += value;
  }

  time(name: string, tags: Tags, ms: number): void {
    observe(this.series(this.timers, name, tags, emptyTimer).value, ms);
  }

  gauge(name: string, tags: Tags, value: number): void {
    this.series(this.gauges, name, tags, () => value).value = value;
  }

  take(): ClientSnapshot {
    const copies = <T>(map: Map<string, Series<T>>) => [...map.values()].map((s) => ({ ...s }));
    const counters = copies(this.counters);
    const timers = copies(this.timers).filter((series) => series.value.count > 0);
    const gauges = copies(this.gauges);
    for (const series of this.counters.values()) series.value = 0;
    for (const series of this.timers.values()) series.value = emptyTimer();
    return { counters, timers, gauges };
  }

  /** Adds a worker's `take()`: counters add up, timers combine, a gauge takes the last value. */
  merge(snapshot: ClientSnapshot): void {
    for (const { name, tags, value } of snapshot.counters) this.count(name, tags, value);
    for (const { name, tags, value: t } of snapshot.timers) {
      observe(this.series(this.timers, name, tags, emptyTimer).value, t.sum, t.count, t.min, t.max);
    }
    for (const { name, tags, value } of snapshot.gauges) this.gauge(name, tags, value);
  }

  private series<T>(map: Map<string, Series<T>>, name: string, tags: Tags, zero: () => T) {
    const key = JSON.stringify([name, tags]);
    let series = map.get(key);
    if (!series) map.set(key, (series = { name, tags, value: zero() }));
    return series;
  }
}

export function clientMetrics(
  stats: ClientStats | undefined,
  registry: Registry | undefined,
): Required<ClientEvents> {
  const registers = registry && [registry];
  const counter = (name: string, help: string, labelNames: string[]) =>
    registers && new Counter({ name, help, labelNames, registers });
  const renewals = counter(
    'token_renewals_total',
    'Tokens obtained from the token server, by client and what made them due.',
    ['clientId', 'trigger'],
  );
  const renewalErrors = counter(
    'token_renewal_errors_total',
    'Failed token requests, by client, trigger and cause.',
    ['clientId', 'trigger', 'cause'],
  );
  const waits = counter(
    'token_waits_total',
    'Calls that waited for a token (none at hand), by client and outcome.',
    ['clientId', 'outcome'],
  );
  const waitSeconds =
    registers &&
    new Histogram({
      name: 'token_wait_seconds',
      help: 'How long calls waited for a token.',
      labelNames: ['clientId'],
      registers,
    });
  const keyFetches = counter(
    'key_fetches_total',
    'Look-ups at the key distribution server, by outcome.',
    ['outcome'],
  );
  const opened = counter('circuit_opened_total', 'Times a downstream circuit opened.', [
    'downstream',
  ]);
  const rejected = counter(
    'circuit_rejected_total',
    'Calls refused at once by an open downstream circuit.',
    ['downstream'],
  );
  const circuitState =
    registers &&
    new Gauge({
      name: 'circuit_state',
      help: 'A downstream circuit: 0 closed, 1 half-open, 2 open.',
      labelNames: ['downstream'],
      registers,
    });
  const retries = counter(
    'downstream_retries_total',
    'Downstream calls sent a second time, by reason.',
    ['downstream', 'reason'],
  );
  const count = (name: string, prometheus: Counter | undefined, tags: Tags) => {
    stats?.count(name, tags);
    prometheus?.inc(tags);
  };
  return {
    tokenRenewed: ({ clientId, trigger }) =>
      count('token_renewal', renewals, { clientId, trigger }),
    tokenRenewalFailed: ({ clientId, trigger, cause }) =>
      count('token_renewal_error', renewalErrors, { clientId, trigger, cause }),
    tokenWaited: ({ clientId, ms, ok }) => {
      count('token_wait', waits, { clientId, outcome: ok ? 'ok' : 'timeout' });
      stats?.time('token_wait_time', { clientId }, ms);
      waitSeconds?.observe({ clientId }, ms / 1000);
    },
    keyFetched: ({ outcome }) => count('key_fetch', keyFetches, { outcome }),
    circuitChanged: ({ downstream, state }) => {
      if (state === 'open') count('circuit_open', opened, { downstream });
      const value = CIRCUIT_STATE_VALUE[state] ?? 0;
      stats?.gauge('circuit_state', { downstream }, value);
      circuitState?.set({ downstream }, value);
    },
    circuitRejected: ({ downstream }) => count('circuit_rejected', rejected, { downstream }),
    downstreamRetried: ({ downstream, reason }) =>
      count('downstream_retry', retries, { downstream, reason }),
  };
}
