// The processes under measurement (started with @chain/testkit's process helper): their RSS and
// CPU read from /proc/<pid>/, and an RSS sampler.
import fs from 'node:fs';

/** Resident set size (VmRSS) and its peak (VmHWM) of a process in MB, or undefined once gone. */
export function readRss(pid) {
  let status;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

/** CPU time (user + system) a process has used so far, in milliseconds, or 0 once gone. */
export function readCpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
const CLOCK_TICKS = 100; // USER_HZ on Linux

/**
 * Samples the RSS of the given processes every `intervalMs`: `mark(label)` records the current
 * RSS under a label (e.g. the end of the warm-up), `stop()` returns, per process, the peak RSS
 * seen, the marks and the last sample.
 */
export function sampleRss(processes, intervalMs = 250) {
  const stats = new Map(
    processes.map((p) => [p.name, { pid: p.pid, peakMb: 0, lastMb: 0, marks: {} }]),
  );
  const tick = () => {
    for (const s of stats.values()) {
      const rss = readRss(s.pid);
      if (!rss) continue;
      s.lastMb = rss.rssMb;
      s.peakMb = Math.max(s.peakMb, rss.rssMb);
    }
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  return {
    mark(label) {
      tick();
      for (const s of stats.values()) s.marks[label] = s.lastMb;
    },
    /** The RSS recorded under a label, by process name. */
    marks(label) {
      return Object.fromEntries([...stats].map(([name, s]) => [name, s.marks[label]]));
    },
    stop() {
      tick();
      clearInterval(timer);
      return Object.fromEntries([...stats].map(([name, { pid: _pid, ...s }]) => [name, s]));
    },
  };
}
