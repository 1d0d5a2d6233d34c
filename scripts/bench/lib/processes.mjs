// Child processes under measurement: started with node, ready once they log their HTTPS port,
// their RSS sampled from /proc/<pid>/status, stopped with SIGTERM (SIGKILL after a grace time).
import { spawn } from 'node:child_process';
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
 * Starts `node <script> [...args]` and resolves once it logs a JSON line with `protocol: https`
 * and a port (the runtime's "listening on https port N"; the first such line wins). Every stdout
 * line is kept in `lines` (bounded) for the checks after a run.
 */
export function startProcess(
  name,
  script,
  { args = [], env = {}, nodeArgs = [], timeoutMs = 20000 } = {},
) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = [];
  let stderr = '';
  let buffer = '';
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );
  return new Promise((resolve, reject) => {
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-20000);
    });
    child.stdout.on('data', (d) => {
      buffer += d;
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (lines.length < 5000) lines.push(line);
        if (ready) continue;
        let event;
        try {
          event = JSON.parse(line);
        } catch {
          continue;
        }
        if (event.protocol === 'https' && typeof event.port === 'number') {
          ready = true;
          clearTimeout(timer);
          resolve({
            name,
            pid: child.pid,
            port: event.port,
            lines,
            stderr: () => stderr,
            alive: () => child.exitCode === null && child.signalCode === null,
            stop: async (graceMs = 5000) => {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
              const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
              const code = await exited;
              clearTimeout(force);
              return code;
            },
          });
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${name} exited with ${code} before listening\n${stderr}`));
    });
  });
}

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

/** Stops every process, in parallel, ignoring the ones already gone. */
export async function stopAll(processes) {
  await Promise.all(processes.filter(Boolean).map((p) => p.stop()));
}
