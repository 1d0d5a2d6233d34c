import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { createMetricsMerger, type WorkerLink, type WorkerSnapshot } from '@chain/metrics';
import type { ServiceConfig } from './service-config';

/**
 * server.yml `workers` above 1: the service as a node:cluster. The primary process reads and
 * checks the config, forks the workers and serves nothing; every worker runs the whole service
 * and listens on the same port (the primary hands connections out in turn). The primary:
 *
 * - logs the listening line once, when every worker listens (what `pnpm start`, the tests and
 *   the bench wait for); a worker that cannot start (a config file, a port in use) ends the
 *   service with its message, once, and exit code 1;
 * - on SIGTERM or SIGINT, asks every worker to stop as one process stops (503 ERR20006 for new
 *   requests, in-flight ones finish, server.yml `shutdownTimeoutMs`), waits for them, writes
 *   the last metrics and exits 0;
 * - replaces a worker that dies, and gives up (exit code 1, saying why) when workers keep dying;
 * - is the one writer of the metrics: the workers hand their intervals over (see
 *   @chain/metrics cluster-metrics), and `GET /metrics` on any worker answers for them all.
 *
 * Messages between the primary and a worker carry `chain` (their type) so that prom-client's
 * own messages on the same channel pass by.
 */

/** The environment variable that tells a worker its number (1, 2, ...): set by the primary. */
export const WORKER_ENV = 'CHAIN_WORKER';

/** This process's worker number, or undefined outside a cluster of this runtime. */
export function workerNumber(): number | undefined {
  if (!cluster.isWorker) return undefined;
  const n = Number(process.env[WORKER_ENV]);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export interface ListeningPort {
  protocol: 'https' | 'http';
  ip: string;
  port: number;
  framework: string;
  http2: boolean;
  /** server.yml enableTwoWayTls: the port asks for client certificates. */
  twoWayTls?: true;
  /** server.yml probePort: the port serves `/health` and `/ready` only. */
  probes?: true;
}

/** The message of a listening line: the service's port, or its probe port. */
export function listeningMessage(port: ListeningPort): string {
  return `${port.probes ? 'probes listening' : 'listening'} on ${port.protocol} port ${port.port}`;
}

type ToPrimary =
  | { chain: 'listening'; ports: ListeningPort[] }
  | { chain: 'cannot-start'; message: string; file?: string; key?: string }
  | { chain: 'metrics'; snapshot: WorkerSnapshot }
  | { chain: 'prometheus'; id: number };

type ToWorker =
  | { chain: 'stop' }
  | { chain: 'prometheus'; id: number; contentType?: string; body?: string; error?: string };

function sendToPrimary(message: ToPrimary): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send || !process.connected) {
      reject(new Error('no primary process'));
      return;
    }
    process.send(message, undefined, {}, (err) => (err ? reject(err) : resolve()));
  });
}

/** Worker side: tells the primary this worker listens. */
export function reportListening(ports: ListeningPort[]): Promise<void> {
  return sendToPrimary({ chain: 'listening', ports });
}

/** Worker side: tells the primary why this worker cannot start (the primary says it, once). */
export function reportCannotStart(message: string, file?: string, key?: string): Promise<void> {
  return sendToPrimary({ chain: 'cannot-start', message, file, key }).catch(() => {
    // No primary to say it: say it here.
    process.stderr.write(`Cannot start: ${message}\n`);
  });
}

/** What a worker does when the primary asks it to stop: before it serves, end at once. */
let stopWorker: () => void = () => process.exit(0);

/** Worker side, from its start: stops when the primary asks, or when the primary is gone. */
export function watchForStop(): void {
  process.on('message', (message: ToWorker) => {
    if (message?.chain === 'stop') stopWorker();
  });
  process.once('disconnect', () => stopWorker());
}

/** Worker side, once it serves: how it stops (gracefully, as one process stops). */
export function onStopRequest(stop: () => void): void {
  stopWorker = stop;
}

let prometheusRequests = 0;

/** Worker side: the metrics' path to the primary; undefined outside a cluster. */
export function workerMetricsLink(): WorkerLink | undefined {
  if (workerNumber() === undefined) return undefined;
  const waiting = new Map<number, (message: ToWorker & { chain: 'prometheus' }) => void>();
  process.on('message', (message: ToWorker) => {
    if (message?.chain === 'prometheus') waiting.get(message.id)?.(message);
  });
  return {
    send: (snapshot) => sendToPrimary({ chain: 'metrics', snapshot }),
    prometheus: () =>
      new Promise((resolve, reject) => {
        const id = ++prometheusRequests;
        waiting.set(id, (answer) => {
          waiting.delete(id);
          if (answer.error !== undefined) reject(new Error(answer.error));
          else resolve({ contentType: answer.contentType ?? '', body: answer.body ?? '' });
        });
        sendToPrimary({ chain: 'prometheus', id }).catch((err: Error) => {
          waiting.delete(id);
          reject(err);
        });
      }),
  };
}

export interface PrimaryOptions {
  config: ServiceConfig;
  logger: Logger;
  /** The script the workers run (default: this process's). */
  exec?: string;
  /** Added to the workers' environment. */
  env?: NodeJS.ProcessEnv;
  /** The workers' stdout and stderr piped to this process (worker.process.stdout) instead of shared. */
  silent?: boolean;
  /** Crashes tolerated within `crashWindowMs` before the service gives up (default 5 in 60 s). */
  maxCrashes?: number;
  crashWindowMs?: number;
}

export interface Primary {
  /** Resolves with the ports once every worker listens (rejects when the service cannot start). */
  listening: Promise<ListeningPort[]>;
  /** Resolves with the exit code once the service has stopped (0) or given up (1). */
  done: Promise<number>;
  /** Stops every worker gracefully; resolves as `done`. */
  stop(reason?: string): Promise<number>;
  /** The live workers' process ids. */
  pids(): number[];
}

/** Primary side: forks `config.server.workers` workers and runs them until stopped. */
export function runPrimary(options: PrimaryOptions): Primary {
  const { config, logger } = options;
  const { workers: count, shutdownTimeoutMs, serviceId } = config.server;
  const maxCrashes = options.maxCrashes ?? 5;
  const crashWindowMs = options.crashWindowMs ?? 60_000;
  if (options.exec || options.silent) {
    cluster.setupPrimary({ exec: options.exec, silent: options.silent });
  }

  const metrics = createMetricsMerger(config.metrics, {
    serviceId,
    logger,
    prometheus: config.prometheus,
  });
  const numbers = new Map<Worker, number>();
  const listeners = new Set<Worker>();
  let nextNumber = 1;
  let up = false;
  let stopping = false;
  let failed = false;
  const crashes: number[] = [];

  let resolveListening!: (ports: ListeningPort[]) => void;
  let rejectListening!: (err: Error) => void;
  const listening = new Promise<ListeningPort[]>((resolve, reject) => {
    resolveListening = resolve;
    rejectListening = reject;
  });
  listening.catch(() => undefined);
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));

  const fork = () => {
    const number = nextNumber++;
    const worker = cluster.fork({ ...options.env, [WORKER_ENV]: String(number) });
    numbers.set(worker, number);
    worker.on('message', (message: ToPrimary) => onMessage(worker, message));
    // 'exit' can come before the last messages are read (a worker's reason for not starting,
    // its last metrics): the worker is dealt with once its channel has closed.
    worker.on('exit', (code, signal) => {
      if (worker.isConnected())
        worker.process.once('disconnect', () => onExit(worker, code, signal));
      else onExit(worker, code, signal);
    });
  };

  const onMessage = (worker: Worker, message: ToPrimary) => {
    switch (message?.chain) {
      case 'listening':
        listeners.add(worker);
        if (up) {
          logger.info({ worker: numbers.get(worker), pid: worker.process.pid }, 'worker replaced');
        } else if (listeners.size === count && !stopping) {
          up = true;
          for (const port of message.ports) {
            logger.info({ ...port, workers: count }, listeningMessage(port));
          }
          metrics.start();
          resolveListening(message.ports);
        }
        return;
      case 'cannot-start':
        if (up) {
          logger.error(
            { worker: numbers.get(worker), file: message.file, key: message.key },
            `worker cannot start: ${message.message}`,
          );
        } else {
          cannotStart(message.message, { file: message.file, key: message.key });
        }
        return;
      case 'metrics':
        metrics.add(message.snapshot);
        return;
      case 'prometheus':
        metrics.prometheus().then(
          (answer) => reply(worker, { chain: 'prometheus', id: message.id, ...answer }),
          (err: Error) =>
            reply(worker, { chain: 'prometheus', id: message.id, error: err.message }),
        );
        return;
      default:
    }
  };

  const reply = (worker: Worker, message: ToWorker) => {
    if (worker.isConnected()) worker.send(message);
  };

  /** The service ends before it served: one message, exit code 1. */
  const cannotStart = (message: string, fields: Record<string, unknown> = {}) => {
    if (failed || stopping) return;
    failed = true;
    process.stderr.write(`Cannot start: ${message}\n`);
    logger.fatal(fields, message);
    rejectListening(new Error(message));
    void stopAll(1);
  };

  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    const number = numbers.get(worker);
    numbers.delete(worker);
    listeners.delete(worker);
    if (stopping || failed) {
      if (numbers.size === 0) finish();
      return;
    }
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    if (!up) {
      cannotStart(`worker ${number} ended (${how}) before it listened`);
      if (numbers.size === 0) finish();
      return;
    }
    const now = Date.now();
    crashes.push(now);
    while (crashes.length && crashes[0] <= now - crashWindowMs) crashes.shift();
    if (crashes.length >= maxCrashes) {
      const why = `${crashes.length} workers ended within ${crashWindowMs / 1000} s; the last: worker ${number} (${how})`;
      process.stderr.write(`Stopping: ${why}\n`);
      logger.fatal({ worker: number, pid: worker.process.pid, code, signal }, `giving up: ${why}`);
      failed = true;
      void stopAll(1);
      return;
    }
    logger.error(
      { worker: number, pid: worker.process.pid, code, signal },
      `worker ${number} ended (${how}); starting another`,
    );
    fork();
  };

  let exitCode = 0;
  let forceTimer: NodeJS.Timeout | undefined;
  const stopAll = (code: number): Promise<number> => {
    exitCode = Math.max(exitCode, code);
    stopping = true;
    for (const worker of numbers.keys()) reply(worker, { chain: 'stop' });
    // A worker stops within shutdownTimeoutMs and a few seconds for its last lines and metrics.
    forceTimer ??= setTimeout(() => {
      for (const worker of numbers.keys()) {
        logger.warn({ worker: numbers.get(worker) }, 'worker did not stop in time; killing it');
        worker.process.kill('SIGKILL');
      }
    }, shutdownTimeoutMs + 5_000);
    forceTimer.unref();
    if (numbers.size === 0) finish();
    return done;
  };

  let finishing = false;
  const finish = () => {
    if (finishing) return;
    finishing = true;
    clearTimeout(forceTimer);
    void metrics
      .stop()
      .catch(() => undefined)
      .then(() => resolveDone(exitCode));
  };

  for (let i = 0; i < count; i++) fork();

  return {
    listening,
    done,
    stop: (reason) => {
      if (!stopping && !failed) {
        logger.info({ reason, workers: numbers.size }, 'stopping: finishing in-flight requests');
      }
      return stopAll(0);
    },
    pids: () => [...numbers.keys()].map((w) => w.process.pid as number),
  };
}

/** The primary of `pnpm start` and the services: runPrimary, stopped by SIGTERM/SIGINT, then exit. */
export function runPrimaryProcess(options: PrimaryOptions): void {
  const primary = runPrimary(options);
  const { logger } = options;
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'signal received');
    void primary.stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // The last line is written on exit (./log-destination), or given up on with the reader gone.
  void primary.done.then((code) => {
    logger.info(code === 0 ? 'stopped' : 'stopped after a failure');
    process.exit(code);
  });
}
