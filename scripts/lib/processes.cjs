// @ts-check
// The one way the scripts (pnpm start, pnpm bench) and the tests start a service or any other
// Node program as a child process: ready once it logs the port it listens on, every stdout line
// kept (and waited on by event, never by polling), stopped with SIGTERM then SIGKILL.
'use strict';
const { spawn } = require('node:child_process');
const { EventEmitter } = require('node:events');
const fs = require('node:fs');

/**
 * @typedef {object} StartOptions
 * @property {string[]} [args] arguments after the script
 * @property {string[]} [nodeArgs] arguments of node before the script (`--cpu-prof`)
 * @property {NodeJS.ProcessEnv} [env] merged over process.env
 * @property {number} [timeoutMs] longest wait for the listening line (default 20000)
 * @property {number} [logFd] a file descriptor that receives a copy of stdout and stderr
 * @property {number} [maxLines] stdout lines kept in `lines` (default 10000)
 */

/**
 * @typedef {object} RunningProcess
 * @property {string} name
 * @property {number} pid
 * @property {import('node:child_process').ChildProcess} child
 * @property {number} port the port of the first `listening on …` line (a JSON log line with `protocol` and `port`)
 * @property {string[]} lines every stdout line so far
 * @property {() => string} stderr stderr so far (the last 20000 characters)
 * @property {(match: (line: string) => boolean, timeoutMs?: number) => Promise<string>} waitForLine the first line, logged or to come, that matches
 * @property {Promise<number | null>} exited the exit code (null when a signal ended it)
 * @property {() => boolean} alive
 * @property {(graceMs?: number) => Promise<number | null>} stop SIGTERM, SIGKILL after `graceMs` (default 12000), the exit code
 */

/** @param {string} line @returns {{ port: number } | undefined} */
function listeningLine(line) {
  try {
    const event = JSON.parse(line);
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
 * `node [nodeArgs] <script> [args]`, resolved once it logs that it listens; rejected when it
 * exits first (with its stderr) or does not listen within `timeoutMs` (then it is killed).
 * @param {string} name
 * @param {string} script
 * @param {StartOptions} [options]
 * @returns {Promise<RunningProcess>}
 */
function startProcess(name, script, options = {}) {
  const { args = [], nodeArgs = [], env = {}, timeoutMs = 20000, maxLines = 10000 } = options;
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  /** @type {string[]} */
  const lines = [];
  const events = new EventEmitter();
  events.setMaxListeners(0);
  let stderr = '';
  let buffer = '';
  /** @type {Promise<number | null>} */
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const copy = (/** @type {Buffer} */ d) => {
    if (options.logFd !== undefined) fs.writeSync(options.logFd, d);
  };
  child.stderr?.on('data', (d) => {
    copy(d);
    stderr = (stderr + d).slice(-20000);
  });
  child.stdout?.on('data', (d) => {
    copy(d);
    buffer += d;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (lines.length < maxLines) lines.push(line);
      events.emit('line', line);
    }
  });
  // A reader that has gone (the parent closed the pipe on purpose) must not crash the parent.
  child.stdout?.on('error', () => undefined);

  /** @type {RunningProcess['waitForLine']} */
  const waitForLine = (match, wait = 5000) => {
    const seen = lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const onLine = (/** @type {string} */ line) => {
        if (!match(line)) return;
        done();
        resolve(line);
      };
      const onExit = () => {
        done();
        reject(new Error(`${name} exited before the line came:\n${lines.join('\n')}\n${stderr}`));
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
  /** @type {RunningProcess['stop']} */
  const stop = async (graceMs = 12000) => {
    if (alive()) child.kill('SIGTERM');
    const force = setTimeout(() => alive() && child.kill('SIGKILL'), graceMs);
    const code = await exited;
    clearTimeout(force);
    return code;
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`${name} did not start within ${timeoutMs} ms:\n${lines.join('\n')}\n${stderr}`),
      );
    }, timeoutMs);
    const onLine = (/** @type {string} */ line) => {
      const ready = listeningLine(line);
      if (!ready) return;
      clearTimeout(timer);
      events.off('line', onLine);
      child.off('exit', onEarlyExit);
      resolve({
        name,
        pid: /** @type {number} */ (child.pid),
        child,
        port: ready.port,
        lines,
        stderr: () => stderr,
        waitForLine,
        exited,
        alive,
        stop,
      });
    };
    const onEarlyExit = (/** @type {number | null} */ code) => {
      clearTimeout(timer);
      events.off('line', onLine);
      reject(
        Object.assign(
          new Error(`${name} exited with code ${code} before listening\n${stderr.trim()}`),
          { exitCode: code, stderr },
        ),
      );
    };
    events.on('line', onLine);
    child.once('exit', onEarlyExit);
  });
}

/**
 * Runs `node <script>` to its end (a program expected to stop by itself, such as a service that
 * refuses its config); killed after `timeoutMs`.
 * @param {string} script
 * @param {{ env?: NodeJS.ProcessEnv, args?: string[], timeoutMs?: number }} [options]
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
function runToExit(script, { env = {}, args = [], timeoutMs = 10000 } = {}) {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Stops every process, in parallel, ignoring the ones already gone.
 * @param {(RunningProcess | undefined)[]} processes
 */
async function stopAll(processes) {
  await Promise.all(processes.map((p) => p?.stop()));
}

module.exports = { startProcess, runToExit, stopAll };
