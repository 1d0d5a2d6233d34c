/** `000` … `999` followed by `Z`: the end of an ISO time string, by millisecond. */
const MILLIS = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, '0')}Z`);

/**
 * A clock that answers `new Date(now()).toISOString()` for the current time, for a log line per
 * request: the date and time up to the second are formatted once a second, the milliseconds
 * come from a table. `now` (epoch milliseconds, integers) is for tests.
 */
export function isoTimeClock(now: () => number = Date.now): () => string {
  let second = NaN;
  let prefix = '';
  return () => {
    const ms = now();
    const inSecond = ms % 1000;
    // Times before 1970 (negative) are formatted whole: the table is for 0-999 only.
    if (inSecond < 0) return new Date(ms).toISOString();
    const start = ms - inSecond;
    if (start !== second) {
      const iso = new Date(start).toISOString();
      // `…:ss.000Z`: keep everything up to the dot, whatever the year's width.
      prefix = iso.slice(0, iso.length - 4);
      second = start;
    }
    return prefix + MILLIS[inSecond];
  };
}
