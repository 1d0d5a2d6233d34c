import type { IPoint } from 'influx';
import { IntervalBuffer } from '../src/interval-buffer.js';
import { captureLogger } from './log-capture.js';

/** An interval of `n` points stamped `t`. */
const interval = (t: number, n = 1): IPoint[] =>
  Array.from({ length: n }, (_, i) => ({
    measurement: 'svc.request.count',
    tags: { endpoint: `/e${i}` },
    fields: { value: t },
    timestamp: t,
  }));

describe('IntervalBuffer', () => {
  let clock: number;
  const setup = (capacity: number) => {
    clock = 1_700_000_000_000;
    const log = captureLogger();
    const buffer = new IntervalBuffer(capacity, log.logger, () => clock);
    const timestamps = () => buffer.next(Infinity).map((i) => i.timestamp);
    const messages = () => log.lines().map((l) => [l.level, l.msg]);
    return { buffer, log, timestamps, messages };
  };

  it('holds intervals oldest first and hands them over in that order', () => {
    const { buffer, timestamps, messages } = setup(5);
    for (const t of [1, 2, 3]) buffer.add(t, interval(t));
    expect(buffer.size).toBe(3);
    expect(timestamps()).toEqual([1, 2, 3]);
    buffer.written(2);
    expect(timestamps()).toEqual([3]);
    buffer.written(1);
    expect(buffer.size).toBe(0);
    // No failure, nothing dropped: nothing to say.
    expect(messages()).toEqual([]);
  });

  it('hands over whole intervals up to the points bound, and at least one', () => {
    const { buffer } = setup(10);
    buffer.add(1, interval(1, 3));
    buffer.add(2, interval(2, 3));
    buffer.add(3, interval(3, 3));
    buffer.add(4, interval(4, 8));
    const sizes = (max: number) => buffer.next(max).map((i) => [i.timestamp, i.points.length]);
    expect(sizes(6)).toEqual([
      [1, 3],
      [2, 3],
    ]);
    expect(sizes(8)).toEqual([
      [1, 3],
      [2, 3],
    ]);
    expect(sizes(2)).toEqual([[1, 3]]);
    buffer.written(3);
    // One interval larger than the bound goes alone, never split.
    expect(sizes(5)).toEqual([[4, 8]]);
    // Handing over takes nothing out.
    expect(buffer.size).toBe(1);
  });

  it('drops the oldest past its capacity, counts them, and says it once per outage', () => {
    const { buffer, log, timestamps, messages } = setup(3);
    buffer.add(1, interval(1));
    buffer.failed('connect ECONNREFUSED 127.0.0.1:8086');
    for (const t of [2, 3, 4, 5, 6]) {
      clock += 60_000;
      buffer.add(t, interval(t));
      buffer.failed('connect ECONNREFUSED 127.0.0.1:8086');
    }
    expect(timestamps()).toEqual([4, 5, 6]);
    expect(messages()).toEqual([
      [
        40,
        'metrics: cannot report to InfluxDB; up to 3 intervals are held and written when it answers',
      ],
      [20, 'metrics: InfluxDB still not answering'],
      [20, 'metrics: InfluxDB still not answering'],
      [
        40,
        'metrics: 3 intervals held, the most metrics.yml bufferIntervals allows; the oldest are dropped until InfluxDB answers',
      ],
      [20, 'metrics: InfluxDB still not answering'],
      [20, 'metrics: InfluxDB still not answering'],
      [20, 'metrics: InfluxDB still not answering'],
    ]);
    expect(log.lines()[0]).toMatchObject({
      reason: 'connect ECONNREFUSED 127.0.0.1:8086',
      held: 1,
      bufferIntervals: 3,
    });
    expect(log.lines().at(-1)).toMatchObject({ held: 3 });

    // InfluxDB answers: the held ones (5, 6) are written late, the new one (7) on time.
    clock += 60_000;
    buffer.add(7, interval(7));
    expect(timestamps()).toEqual([5, 6, 7]);
    buffer.written(3);
    expect(log.lines().at(-1)).toMatchObject({
      level: 30,
      msg: 'metrics: reporting to InfluxDB resumed; 2 intervals written late, 4 dropped',
      late: 2,
      dropped: 4,
      outageMs: 6 * 60_000,
    });

    // The next outage is said again, and counted from zero.
    const said = log.lines().length;
    buffer.add(8, interval(8));
    buffer.failed('Request timed out');
    buffer.written(1);
    expect(
      log
        .lines()
        .slice(said)
        .map((l) => l.msg),
    ).toEqual([
      'metrics: cannot report to InfluxDB; up to 3 intervals are held and written when it answers',
      'metrics: reporting to InfluxDB resumed; 1 interval written late, 0 dropped',
    ]);
  });

  it('ends an outage only once the buffer is empty: a replay cut short goes on later', () => {
    const { buffer, messages, timestamps } = setup(10);
    for (const t of [1, 2, 3, 4]) {
      buffer.add(t, interval(t));
      buffer.failed('Request timed out');
    }
    buffer.written(2);
    buffer.failed('Request timed out');
    expect(timestamps()).toEqual([3, 4]);
    buffer.add(5, interval(5));
    buffer.written(3);
    expect(messages().filter(([level]) => (level as number) >= 30)).toEqual([
      [
        40,
        'metrics: cannot report to InfluxDB; up to 10 intervals are held and written when it answers',
      ],
      [30, 'metrics: reporting to InfluxDB resumed; 4 intervals written late, 0 dropped'],
    ]);
  });

  it('drops past a capacity of 1 too, while a write is still pending (no failure yet)', () => {
    const { buffer, messages, timestamps } = setup(1);
    buffer.add(1, interval(1));
    buffer.add(2, interval(2));
    buffer.add(3, interval(3));
    expect(timestamps()).toEqual([3]);
    buffer.written(1);
    expect(messages()).toEqual([
      [
        40,
        'metrics: 1 interval held, the most metrics.yml bufferIntervals allows; the oldest are dropped until InfluxDB answers',
      ],
      [30, 'metrics: reporting to InfluxDB resumed; 0 intervals written late, 2 dropped'],
    ]);
  });

  it('lets refused intervals go, saying so', () => {
    const { buffer, log, timestamps } = setup(10);
    for (const t of [1, 2, 3]) buffer.add(t, interval(t));
    buffer.refused(2, 'partial write: points beyond retention policy dropped=2');
    expect(timestamps()).toEqual([3]);
    expect(log.lines()).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'metrics: InfluxDB refused the points; 2 intervals discarded',
        reason: 'partial write: points beyond retention policy dropped=2',
        intervals: 2,
      }),
    ]);
  });

  it('says what is lost when the service stops before InfluxDB answers', () => {
    const { buffer, log } = setup(2);
    buffer.abandon(); // nothing held: nothing said
    for (const t of [1, 2, 3]) {
      buffer.add(t, interval(t));
      buffer.failed('connect ECONNREFUSED 127.0.0.1:8086');
    }
    buffer.abandon();
    expect(buffer.size).toBe(0);
    expect(log.lines().at(-1)).toMatchObject({
      level: 40,
      msg: 'metrics: InfluxDB did not answer before the service stopped; 2 intervals not written',
      notWritten: 2,
      dropped: 1,
    });
  });
});
