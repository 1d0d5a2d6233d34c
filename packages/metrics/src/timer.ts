/** In ms. */
export interface Timer {
  count: number;
  min: number;
  max: number;
  sum: number;
}

export const emptyTimer = (): Timer => ({ count: 0, min: Infinity, max: -Infinity, sum: 0 });

/** Adds `count` observations (one by default) of `sum` ms in all, from `min` to `max`. */
export function observe(timer: Timer, sum: number, count = 1, min = sum, max = sum): void {
  timer.count += count;
  timer.sum += sum;
  if (min < timer.min) timer.min = min;
  if (max > timer.max) timer.max = max;
}
