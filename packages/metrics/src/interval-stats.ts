import { COUNTERS, outcomeOf, zeroCounts, type CounterName } from './outcome.js';
import { SeriesTable } from './series-table.js';
import { emptyTimer, observe } from './timer.js';

/** One series (endpoint x client) over one interval; `responseTime` in ms, if it had requests. */
export interface SeriesSnapshot {
  endpoint: string;
  clientId: string;
  counts: Record<CounterName, number>;
  responseTime?: { count: number; min: number; max: number; mean: number };
}

export class IntervalStats {
  private readonly table = new SeriesTable((endpoint, clientId) => ({
    endpoint,
    clientId,
    counts: zeroCounts(),
    timer: emptyTimer(),
  }));

  record(endpoint: string, clientId: string, statusCode: number, elapsedMs: number): void {
    const entry = this.table.get(endpoint, clientId);
    entry.counts.request += 1;
    const outcome = outcomeOf(statusCode);
    if (outcome) entry.counts[outcome] += 1;
    observe(entry.timer, elapsedMs);
  }

  /** Adds a worker's `drain()`: counts add up, timers combine (the means weighted). */
  merge(snapshot: readonly SeriesSnapshot[]): void {
    for (const { endpoint, clientId, counts, responseTime } of snapshot) {
      const entry = this.table.get(endpoint, clientId);
      for (const name of COUNTERS) entry.counts[name] += counts[name] ?? 0;
      if (responseTime && responseTime.count > 0) {
        const { count, min, max, mean } = responseTime;
        observe(entry.timer, mean * count, count, min, max);
      }
    }
  }

  drain(): SeriesSnapshot[] {
    return this.table.all.map((entry) => {
      const { endpoint, clientId, counts, timer: t } = entry;
      entry.counts = zeroCounts();
      entry.timer = emptyTimer();
      if (t.count === 0) return { endpoint, clientId, counts };
      const responseTime = { count: t.count, min: t.min, max: t.max, mean: t.sum / t.count };
      return { endpoint, clientId, counts, responseTime };
    });
  }
}
