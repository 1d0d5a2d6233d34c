import type { IPoint } from 'influx';
import type { Logger } from 'pino';

const intervals = (n: number) => `${n} interval${n === 1 ? '' : 's'}`;

/** The intervals not yet written, and the account of an outage in three lines at most (README). */
export class IntervalBuffer {
  private readonly held: { timestamp: number; points: IPoint[]; late: boolean }[] = [];
  /** From the first failed write or dropped interval until the buffer is empty again. */
  private outage?: { since: number; late: number; dropped: number; failureLogged: boolean };

  constructor(
    readonly capacity: number,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.held.length;
  }

  add(timestamp: number, points: IPoint[]): void {
    this.held.push({ timestamp, points, late: false });
    while (this.held.length > this.capacity) {
      this.held.shift();
      const outage = this.begin();
      outage.dropped += 1;
      if (outage.dropped === 1) {
        this.logger.warn(
          { bufferIntervals: this.capacity },
          `metrics: ${intervals(this.capacity)} held, the most metrics.yml bufferIntervals allows; the oldest are dropped until InfluxDB answers`,
        );
      }
    }
  }

  /** The next intervals to write: as many whole ones as hold `maxPoints`, at least one. */
  next(maxPoints: number) {
    let points = 0;
    let count = 0;
    while (count < this.held.length) {
      points += this.held[count].points.length;
      if (count > 0 && points > maxPoints) break;
      count += 1;
    }
    return this.held.slice(0, count);
  }

  written(count: number): void {
    for (const interval of this.held.splice(0, count)) {
      if (interval.late && this.outage) this.outage.late += 1;
    }
    this.endIfEmpty();
  }

  refused(count: number, reason: string): void {
    this.held.splice(0, count);
    this.logger.warn(
      { reason, intervals: count },
      `metrics: InfluxDB refused the points; ${intervals(count)} discarded`,
    );
    this.endIfEmpty();
  }

  failed(reason: string): void {
    for (const interval of this.held) interval.late = true;
    const outage = this.begin();
    if (outage.failureLogged) {
      this.logger.debug(
        { reason, held: this.held.length },
        'metrics: InfluxDB still not answering',
      );
      return;
    }
    outage.failureLogged = true;
    this.logger.warn(
      { reason, held: this.held.length, bufferIntervals: this.capacity },
      `metrics: cannot report to InfluxDB; up to ${intervals(this.capacity)} are held and written when it answers`,
    );
  }

  abandon(): void {
    if (this.held.length === 0) return;
    this.logger.warn(
      { notWritten: this.held.length, dropped: this.outage?.dropped ?? 0 },
      `metrics: InfluxDB did not answer before the service stopped; ${intervals(this.held.length)} not written`,
    );
    this.held.length = 0;
    this.outage = undefined;
  }

  private begin() {
    return (this.outage ??= { since: this.now(), late: 0, dropped: 0, failureLogged: false });
  }

  private endIfEmpty(): void {
    const { outage } = this;
    if (this.held.length > 0 || !outage) return;
    this.outage = undefined;
    this.logger.info(
      { late: outage.late, dropped: outage.dropped, outageMs: this.now() - outage.since },
      `metrics: reporting to InfluxDB resumed; ${intervals(outage.late)} written late, ${outage.dropped} dropped`,
    );
  }
}
