/** In ms. */
export interface Timer {
  count: number;
  min: number;
  max: number;
  sum: number;
}

export const emptyTimer = (): Timer => ({ count: 0, min: Infinity, max: -Infinity, sum: 0 });

export function observe(timer: Timer, ms: number): void {
  timer.count += 1;
  timer.sum += ms;
  if (ms < timer.min) timer.min = ms;
  if (ms > timer.max) timer.max = ms;
}

export function combine(timer: Timer, other: Timer): void {
  timer.count += other.count;
  timer.sum += other.sum;
  if (other.min < timer.min) timer.min = other.min;
  if (other.max > timer.max) timer.max = other.max;
}
