import os from 'node:os';
import { escape, type IPoint } from 'influx';
import type { ClientSnapshot } from './client-metrics.js';
import type { SeriesSnapshot } from './interval-stats.js';
import { COUNTERS } from './outcome.js';

/** The `hostname` and `ipAddress` tags of every point: the container id and address in compose. */
export interface HostIdentity {
  hostname: string;
  ipAddress: string;
}

export function hostIdentity(
  interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]> = os.networkInterfaces(),
  hostname: string = os.hostname(),
): HostIdentity {
  const found = Object.values(interfaces)
    .flat()
    .find((address) => address?.family === 'IPv4' && !address.internal);
  return { hostname, ipAddress: found?.address ?? '127.0.0.1' };
}

export type PointContext = HostIdentity & { serviceId: string };

const point = (measurement: string, tags: IPoint['tags'], value: number, timestamp: number) => ({
  measurement: escape.measurement(measurement),
  tags,
  fields: { value },
  timestamp,
});

/** One interval's request figures as light-4j's InfluxDbReporter writes them: two views. */
export function toInfluxPoints(
  snapshot: readonly SeriesSnapshot[],
  { serviceId, hostname, ipAddress }: PointContext,
  timestamp: number,
): IPoint[] {
  const points: IPoint[] = [];
  for (const { endpoint, clientId, counts, responseTime: time } of snapshot) {
    const serviceTags = { endpoint, clientId, hostname, ipAddress };
    const clientTags = { endpoint, apiName: serviceId, hostname, ipAddress };
    const add = (name: string, value: number) =>
      points.push(
        point(`${serviceId}.${name}`, serviceTags, value, timestamp),
        point(`${clientId}.${name}`, clientTags, value, timestamp),
      );
    for (const counter of COUNTERS) add(`${counter}.count`, counts[counter]);
    if (time) {
      for (const s of ['min', 'max', 'mean'] as const) add(`response_time.${s}`, time[s]);
    }
  }
  return points;
}

/** One interval's client-side figures, service view only; gauges without a suffix (light-4j). */
export function clientPoints(
  { counters, timers, gauges }: ClientSnapshot,
  { serviceId, hostname, ipAddress }: PointContext,
  timestamp: number,
): IPoint[] {
  const add = (name: string, tags: Record<string, string>, value: number) =>
    point(`${serviceId}.${name}`, { ...tags, hostname, ipAddress }, value, timestamp);
  return [
    ...counters.map((s) => add(`${s.name}.count`, s.tags, s.value)),
    ...timers.flatMap(({ name, tags, value: t }) => [
      add(`${name}.min`, tags, t.min),
      add(`${name}.max`, tags, t.max),
      add(`${name}.mean`, tags, t.sum / t.count),
    ]),
    ...gauges.map((s) => add(s.name, s.tags, s.value)),
  ];
}
