/** light-4j's per-request counters, in the order they are reported. */
export const COUNTERS = [
  'request',
  'success',
  'auth_error',
  'request_error',
  'server_error',
] as const;
export type CounterName = (typeof COUNTERS)[number];

export const zeroCounts = () =>
  Object.fromEntries(COUNTERS.map((name) => [name, 0])) as Record<CounterName, number>;

/** The outcome counter of a response status, as light-4j's MetricsHandler sorts them. */
export type Outcome = Exclude<CounterName, 'request'>;

export function outcomeOf(statusCode: number): Outcome | undefined {
  if (statusCode >= 200 && statusCode < 400) return 'success';
  if (statusCode === 401 || statusCode === 403) return 'auth_error';
  if (statusCode >= 400 && statusCode < 500) return 'request_error';
  if (statusCode >= 500) return 'server_error';
  return undefined;
}
