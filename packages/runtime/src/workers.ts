import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { createMetricsMerger, type WorkerLink, type WorkerSnapshot } from '@chain/metrics';
import type { ServiceConfig } from './service-config.js';

/** README "Workers". Messages carry `chain` so that prom-client's own on the channel pass by. */
const WORKER_ENV = 'CHAIN_WORKER';

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
  twoWayTls?: true;
  probes?: true;
}

export function listeningMessage(port: ListeningPort): string {
  return `${port.probes ? 'probes listening' : 'listening'} on ${port.protocol} port ${port.port}`;
}

type ToPrimary =
  | { chain: 'listening'; ports: ListeningPort[] }
  | { chain: 'cannot-start'; message: string; file?: string; key?: string }
  | { chain: 'metrics'; snapshot: WorkerSnapshot }
  | { chain: 'prometheus'; id: number }
  | { chain: 'reload' };

type ToWorker =
  | { chain: 'stop' }
  | { chain: 'prometheus'; id: number; contentType?: string; body?: string; error?: string };

export function sendToPrimary(message: ToPrimary): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send || !process.connected) return reject(new Error('no primary process'));
    process.send(message, undefined, {}, (err) => (err ? reject(err) : resolve()));
  });
}

export function reportCannotStart(message: string, file?: string, key?: string): Promise<void> {
  return sendToPrimary({ chain: 'cannot-start', message, file, key }).catch(() => {
    process.stderr.write(`Cannot start: ${message}\n`); // no primary to say it
  });
}

/** Before it serves, a worker asked to stop ends at once. */
let stopWorker: () => void = () => process.exit(0);

export function watchForStop(): void {
  process.on('message', (message: ToWorker) => {
    if (message?.chain === 'stop') stopWorker();
  });
  process.once('disconnect', () => stopWorker());
}

export function onStopRequest(stop: () => void): void {
  stopWorker = stop;
}

let prometheusRequests = 0;
let link: WorkerLink | undefined;

/** One a process, whatever number of reloads builds its metrics again. */
export function workerMetricsLink(): WorkerLink | undefined {
  if (workerNumber() === undefined) return undefined;
  return (link ??= createLink());
}

function createLink(): WorkerLink {
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

/** Deaths of workers within CRASH_WINDOW_MS that end the service. */
const MAX_CRASHES = 5;
const CRASH_WINDOW_MS = 60_000;

export function runPrimary(config: ServiceConfig, logger: Logger): void {
  const { workers: count, shutdownTimeoutMs, serviceId } = config.server;
  const metrics = createMetricsMerger(config.metrics, {
    serviceId,
    logger,
    prometheus: config.prometheus,
  });
  const numbers = new Map<Worker, number>();
  let nextNumber = 1;
  let listened = 0;
  let up = false;
  let stopping = false;
  const crashes: number[] = [];

  const fork = () => {
    const number = nextNumber++;
    const worker = cluster.fork({ [WORKER_ENV]: String(number) });
    numbers.set(worker, number);
    worker.on('message', (message: ToPrimary) => onMessage(worker, message));
    // 'exit' can come before the last messages (why it cannot start, its last metrics) are read.
    worker.on('exit', (code, signal) => {
      if (worker.isConnected())
        worker.process.once('disconnect', () => onExit(worker, code, signal));
      else onExit(worker, code, signal);
    });
  };

  const onMessage = (worker: Worker, message: ToPrimary) => {
    switch (message?.chain) {
      case 'listening':
        if (up) {
          logger.info({ worker: numbers.get(worker), pid: worker.process.pid }, 'worker replaced');
        } else if (++listened === count && !stopping) {
          up = true;
          for (const port of message.ports) {
            logger.info({ ...port, workers: count }, listeningMessage(port));
          }
          metrics.start();
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
      case 'reload': // one worker reloaded at the endpoint: the others read the files too
        for (const other of numbers.keys()) if (other !== worker) other.process.kill('SIGHUP');
        return;
      case 'prometheus':
        metrics.prometheus().then(
          (answer) => reply(worker, { chain: 'prometheus', id: message.id, ...answer }),
          (err: Error) =>
            reply(worker, { chain: 'prometheus', id: message.id, error: err.message }),
        );
        return;
    }
  };

  const reply = (worker: Worker, message: ToWorker) => {
    if (worker.isConnected()) worker.send(message);
  };

  const cannotStart = (message: string, fields: Record<string, unknown> = {}) => {
    if (stopping) return;
    process.stderr.write(`Cannot start: ${message}\n`);
    logger.fatal(fields, message);
    stopAll(1);
  };

  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    const number = numbers.get(worker);
    numbers.delete(worker);
    if (stopping) {
      if (numbers.size === 0) finish();
      return;
    }
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    if (!up) return cannotStart(`worker ${number} ended (${how}) before it listened`);
    const now = Date.now();
    crashes.push(now);
    while (crashes.length && crashes[0] <= now - CRASH_WINDOW_MS) crashes.shift();
    if (crashes.length >= MAX_CRASHES) {
      const why = `${crashes.length} workers ended within ${CRASH_WINDOW_MS / 1000} s; the last: worker ${number} (${how})`;
      process.stderr.write(`Stopping: ${why}\n`);
      logger.fatal({ worker: number, pid: worker.process.pid, code, signal }, `giving up: ${why}`);
      stopAll(1);
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
  const stopAll = (code: number) => {
    exitCode = Math.max(exitCode, code);
    stopping = true;
    for (const worker of numbers.keys()) reply(worker, { chain: 'stop' });
    forceTimer ??= setTimeout(() => {
      for (const worker of numbers.keys()) {
        logger.warn({ worker: numbers.get(worker) }, 'worker did not stop in time; killing it');
        worker.process.kill('SIGKILL');
      }
    }, shutdownTimeoutMs + 5_000).unref();
    if (numbers.size === 0) finish();
  };

  let finishing = false;
  const finish = () => {
    if (finishing) return;
    finishing = true;
    clearTimeout(forceTimer);
    void metrics
      .stop()
      .catch(() => undefined)
      .then(() => {
        logger.info(exitCode === 0 ? 'stopped' : 'stopped after a failure');
        process.exit(exitCode);
      });
  };

  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'signal received');
    if (!stopping) {
      logger.info(
        { reason: signal, workers: numbers.size },
        'stopping: finishing in-flight requests',
      );
    }
    stopAll(0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // Each worker reloads its own configuration.
  process.on('SIGHUP', (signal) => {
    logger.info({ signal }, 'signal received: passed on to the workers');
    for (const worker of numbers.keys()) worker.process.kill('SIGHUP');
  });
  for (let i = 0; i < count; i++) fork();
}
