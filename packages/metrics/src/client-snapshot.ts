import type { Timer } from './timer';

/** One named series of the client side's figures and its tags. */
export interface Series<T> {
  name: string;
  tags: Record<string, string>;
  value: T;
}

/** One interval of a ClientStats as plain data (it crosses the IPC channel of a cluster). */
export interface ClientSnapshot {
  counters: Series<number>[];
  timers: Series<Timer>[];
  gauges: Series<number>[];
}
