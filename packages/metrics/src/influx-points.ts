import { escape, type IPoint } from 'influx';
import type { HostIdentity } from './host-identity';
import type { SeriesSnapshot } from './interval-stats';
import { COUNTERS } from './outcome';

export interface PointContext extends HostIdentity {
  serviceId: string;
}

/**
 * One interval as InfluxDB points, named and tagged as light-4j's InfluxDbReporter does:
 *
 * - service view `<serviceId>.<metric>.<suffix>`, tags endpoint, clientId, hostname, ipAddress;
 * - client view `<clientId>.<metric>.<suffix>`, tags endpoint, apiName (the serviceId),
 *   hostname, ipAddress.
 *
 * Counters have the suffix `count`; the `response_time` timer has `min`, `max` and `mean` in
 * milliseconds (only for a series that saw requests in the interval). One field, `value`.
 * Measurement names are escaped here: the influx package escapes tags but not measurements.
 */
export function toInfluxPoints(
  snapshot: readonly SeriesSnapshot[],
  context: PointContext,
  timestamp: number,
): IPoint[] {
  const { serviceId, hostname, ipAddress } = context;
  const points: IPoint[] = [];
  for (const series of snapshot) {
    const { endpoint, clientId } = series;
    const serviceTags = { endpoint, clientId, hostname, ipAddress };
    const clientTags = { endpoint, apiName: serviceId, hostname, ipAddress };
    const add = (name: string, value: number) => {
      points.push({
        measurement: escape.measurement(`${serviceId}.${name}`),
        tags: serviceTags,
        fields: { value },
        timestamp,
      });
      points.push({
        measurement: escape.measurement(`${clientId}.${name}`),
        tags: clientTags,
        fields: { value },
        timestamp,
      });
    };
    for (const counter of COUNTERS) add(`${counter}.count`, series.counts[counter]);
    const time = series.responseTime;
    if (time) {
      add('response_time.min', time.min);
      add('response_time.max', time.max);
      add('response_time.mean', time.mean);
    }
  }
  return points;
}
