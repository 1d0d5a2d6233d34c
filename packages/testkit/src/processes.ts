// The one way the tests and the scripts (pnpm start, pnpm bench) start a service or any other
// Node program as a child process: ready once it logs the port it listens on, every stdout line
// kept (and waited on by event, never by polling), stopped with SIGTERM then SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

export interface StartOptions {
  /** Arguments after the script. */
  args?: string[];
  /** Arguments of node before the script (`--cpu-prof`). */
  nodeArgs?: string[];
  /** The node binary (default: the one running this process); the bench's `--base-node`. */
  node?: string;
  /** Merged over process.env. */
  env?: NodeJS.ProcessEnv;
  /** Longest wait for the listening line (default 20000), or for the end (runToExit). */
  timeoutMs?: number;
  /** Working directory. */
  cwd?: string;
  /**
   * A file that receives stdout and stderr (appended); once the child listens (startProcess),
   * its output is piped there unread: `lines` and `waitForLine` see only what came before.
   */
  logFile?: string;
  /** Stdout lines kept in `lines` (default 10000). */
  maxLines?: number;
}

export interface ChildHandle {
  name: string;
  child: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  /** Stdout so far (the last 200000 characters). */
  stdout(): string;
  /** Stderr so far (the last 20000 characters). */
  stderr(): string;
  /** The first line, logged or to come, that matches. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** The exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  alive(): boolean;
  /** SIGTERM, SIGKILL after `graceMs` (default 12000); resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  /** With `logFile`: stdout goes on to the file without being read by line. */
  detach(): void;
  /** With `logFile`: settles once the file has everything and is closed. */
  logClosed: Promise<void>;
}

/** A child that listens: a ChildHandle with its pid and the port it logged. */
export type RunningProcess = ChildHandle & { pid: number; port: number };

function listeningLine(line: string): { port: number } | undefined {
  try {
    const event = JSON.parse(line) as { protocol?: unknown; port?: unknown; msg?: unknown };
    if (
      (event.protocol === 'https' || event.protocol === 'http') &&
      typeof event.port === 'number' &&
      /listening/.test(String(event.msg))
    ) {
      return { port: event.port };
    }
  } catch {
    // not a JSON line
  }
  return undefined;
}

/**
 * The last `max` characters of a stream of text, kept as chunks and joined only when asked: a
 * busy child's log (a line per request) costs its reader a copy of each chunk, not of the tail.
 */
function tail(max: number) {
  let chunks: string[] = [];
  let size = 0;
  return {
    add(chunk: string) {
      chunks.push(chunk);
      size += chunk.length;
      if (size > 2 * max) {
        const kept = chunks.join('').slice(-max);
        chunks = [kept];
        size = kept.length;
      }
    },
    text() {
      const joined = chunks.join('').slice(-max);
      chunks = [joined];
      size = joined.length;
      return joined;
    },
  };
}

/** `node [nodeArgs] <script> [args]` with its output captured line by line. */
export function spawnNode(name: string, script: string, options: StartOptions = {}): ChildHandle {
  const { args = [], nodeArgs = [], env = {}, maxLines = 10000 } = options;
  const child = spawn(options.node ?? process.execPath, [...nodeArgs, script, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const out = tail(200000);
  const err = tail(20000);
  let buffer = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const file = options.logFile ? fs.createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  const logClosed = file
    ? new Promise<void>((resolve) => file.once('close', () => resolve()))
    : Promise.resolve();
  // stdout and stderr are two pipes read in chunks that need not end at a line's end: the file
  // takes stderr's chunks only between stdout's lines, so that a stack trace on stderr never
  // lands inside a log line of stdout.
  let outAtLineStart = true;
  let heldErr: Buffer[] = [];
  const copyOut = (d: Buffer) => {
    if (!file || d.length === 0) return;
    file.write(d);
    outAtLineStart = d[d.length - 1] === 0x0a;
    if (outAtLineStart && heldErr.length) {
      for (const e of heldErr) file.write(e);
      heldErr = [];
    }
  };
  const copyErr = (d: Buffer) => {
    if (!file) return;
    if (outAtLineStart) file.write(d);
    else heldErr.push(d);
  };
  // The file ends once the child's output has ended ('close' comes after its streams closed).
  if (file) {
    child.once('close', () => {
      for (const e of heldErr) file.write(e);
      heldErr = [];
      file.end();
    });
  }
  // As text, decoded across chunk boundaries (a character may be split between two chunks); the
  // file gets the bytes as they came.
  const outText = new StringDecoder('utf8');
  const errText = new StringDecoder('utf8');
  child.stderr?.on('data', (d: Buffer) => {
    copyErr(d);
    err.add(errText.write(d));
  });
  const onStdout = (d: Buffer) => {
    copyOut(d);
    const chunk = outText.write(d);
    out.add(chunk);
    const text = buffer + chunk;
    let start = 0;
    let nl;
    while ((nl = text.indexOf('\n', start)) >= 0) {
      const line = text.slice(start, nl);
      start = nl + 1;
      if (lines.length < maxLines) lines.push(line);
      events.emit('line', line);
    }
    buffer = start === 0 ? text : text.slice(start);
  };
  child.stdout?.on('data', onStdout);
  let detached = false;
  /** From now on the child's stdout goes to `logFile` unread (a busy service logs a line per request). */
  const detach = () => {
    if (!file || detached || !child.stdout) return;
    detached = true;
    child.stdout.off('data', onStdout);
    child.stdout.on('data', copyOut);
  };
  // A reader that has gone (the parent closed the pipe on purpose) must not crash the parent.
  child.stdout?.on('error', () => undefined);

  const waitForLine: ChildHandle['waitForLine'] = (match, wait = 5000) => {
    const seen = lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const onLine = (line: string) => {
        if (!match(line)) return;
        done();
        resolve(line);
      };
      const onExit = () => {
        done();
        reject(
          new Error(`${name} exited before the line came:\n${lines.join('\n')}\n${err.text()}`),
        );
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no such line from ${name} within ${wait} ms:\n${lines.join('\n')}`));
      }, wait);
      const done = () => {
        clearTimeout(timer);
        events.off('line', onLine);
        child.off('exit', onExit);
      };
      events.on('line', onLine);
      child.once('exit', onExit);
    });
  };

  const alive = () => child.exitCode === null && child.signalCode === null;
  const stop = async (graceMs = 12000) => {
    if (alive()) child.kill('SIGTERM');
    const force = setTimeout(() => alive() && child.kill('SIGKILL'), graceMs);
    const code = await exited;
    clearTimeout(force);
    return code;
  };
  return {
    name,
    child,
    lines,
    stdout: () => out.text(),
    stderr: () => err.text(),
    waitForLine,
    exited,
    alive,
    stop,
    detach,
    logClosed,
  };
}

/**
 * `node [nodeArgs] <script> [args]`, resolved once it logs that it listens; rejected when it
 * exits first (with its stderr) or does not listen within `timeoutMs` (then it is killed).
 */
export function startProcess(
  name: string,
  script: string,
  options: StartOptions = {},
): Promise<RunningProcess> {
  const handle = spawnNode(name, script, options);
  const { timeoutMs = 20000 } = options;
  return handle
    .waitForLine((line) => listeningLine(line) !== undefined, timeoutMs)
    .then(
      (line) => {
        handle.detach();
        return {
          ...handle,
          pid: handle.child.pid as number,
          port: (listeningLine(line) as { port: number }).port,
        };
      },
      async () => {
        if (handle.alive()) {
          handle.child.kill('SIGKILL');
          throw new Error(
            `${name} did not start within ${timeoutMs} ms:\n${handle.lines.join('\n')}\n${handle.stderr()}`,
          );
        }
        const code = await handle.exited;
        throw Object.assign(
          new Error(`${name} exited with code ${code} before listening\n${handle.stderr().trim()}`),
          { exitCode: code, stderr: handle.stderr() },
        );
      },
    );
}

/**
 * Runs `node <script>` to its end (a program expected to stop by itself, such as a service that
 * refuses its config); killed after `timeoutMs` (default 10000).
 */
export async function runToExit(
  script: string,
  options: StartOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const handle = spawnNode(script, script, options);
  const timer = setTimeout(() => handle.child.kill('SIGKILL'), options.timeoutMs ?? 10000);
  const code = await handle.exited;
  clearTimeout(timer);
  return { code, stdout: handle.stdout(), stderr: handle.stderr() };
}

/** Stops every process, in parallel, ignoring the ones already gone. */
export async function stopAll(processes: (ChildHandle | undefined)[]): Promise<void> {
  await Promise.all(processes.flatMap((p) => (p ? [p.stop()] : [])));
}
