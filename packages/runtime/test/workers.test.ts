import cluster from 'node:cluster';
import {
  onStopRequest,
  reportCannotStart,
  sendToPrimary,
  watchForStop,
  workerMetricsLink,
  workerNumber,
} from '../src/workers.js';
import { replaceProperty } from './support.js';

// The worker's side of the channel to the primary, in this process: cluster.isWorker, the worker
// number and process.send stand in for what cluster.fork sets up (the whole cluster runs as real
// processes in test/e2e/workers.test.ts).
/**
 * Runs `install` and returns a function that hands a message from "the primary" to the 'message'
 * listeners it added (never to the test worker's own listener on the same channel).
 */
function fromPrimary(install: () => void): (message: unknown) => void {
  const before = new Set(process.listeners('message'));
  install();
  const added = process.listeners('message').filter((l) => !before.has(l));
  return (message) => {
    for (const listener of added) (listener as (m: unknown) => void)(message);
  };
}

describe('a worker and its primary: the messages', () => {
  const sent: unknown[] = [];
  let sendError: Error | null = null;
  // A test worker has an IPC channel of its own (process.send, process.connected): kept aside.
  const saved = {
    send: Object.getOwnPropertyDescriptor(process, 'send'),
    connected: Object.getOwnPropertyDescriptor(process, 'connected'),
  };
  const setConnected = (value: boolean) =>
    Object.defineProperty(process, 'connected', { value, configurable: true, writable: true });
  beforeEach(() => {
    sent.length = 0;
    sendError = null;
    replaceProperty(cluster, 'isWorker', true);
    replaceProperty(process, 'env', { ...process.env, CHAIN_WORKER: '2' });
    setConnected(true);
    Object.defineProperty(process, 'send', {
      configurable: true,
      writable: true,
      value: ((
        message: unknown,
        handle: unknown,
        options: unknown,
        callback: (err: Error | null) => void,
      ) => {
        // The test runner's own messages go on through its channel.
        const chain = typeof message === 'object' && message !== null && 'chain' in message;
        const own = saved.send!.value as (...args: unknown[]) => boolean;
        if (!chain) return own.call(process, message, handle, options, callback);
        sent.push(message);
        setImmediate(() => callback(sendError));
        return true;
      }) as typeof process.send,
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    for (const key of ['send', 'connected'] as const) {
      const descriptor = saved[key];
      if (descriptor) Object.defineProperty(process, key, descriptor);
      else delete (process as unknown as Record<string, unknown>)[key];
    }
  });

  it('knows its number only inside a cluster, from CHAIN_WORKER', () => {
    expect(workerNumber()).toBe(2);
    replaceProperty(process, 'env', { ...process.env, CHAIN_WORKER: 'x' });
    expect(workerNumber()).toBeUndefined();
    replaceProperty(cluster, 'isWorker', false);
    replaceProperty(process, 'env', { ...process.env, CHAIN_WORKER: '2' });
    expect(workerNumber()).toBeUndefined();
    expect(workerMetricsLink()).toBeUndefined();
  });

  it('reports that it listens, or why it cannot start (on stderr when the primary is gone)', async () => {
    const port = {
      protocol: 'https',
      ip: '127.0.0.1',
      port: 1,
      framework: 'native',
      http2: false,
    } as const;
    await sendToPrimary({ chain: 'listening', ports: [port] });
    await reportCannotStart('server.yml is wrong', 'server.yml', 'workers');
    expect(sent).toEqual([
      { chain: 'listening', ports: [port] },
      { chain: 'cannot-start', message: 'server.yml is wrong', file: 'server.yml', key: 'workers' },
    ]);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    setConnected(false);
    await reportCannotStart('port taken');
    expect(stderr).toHaveBeenCalledWith('Cannot start: port taken\n');
    await expect(sendToPrimary({ chain: 'listening', ports: [] })).rejects.toThrow(
      'no primary process',
    );
  });

  it('stops when the primary says stop', () => {
    const stop = vi.fn();
    onStopRequest(stop);
    const deliver = fromPrimary(watchForStop);
    deliver({ chain: 'metrics' });
    expect(stop).not.toHaveBeenCalled();
    deliver({ chain: 'stop' });
    expect(stop).toHaveBeenCalledTimes(1);
    onStopRequest(() => undefined);
  });

  it('sends its metrics and gets /metrics from the primary, an error included', async () => {
    let link!: NonNullable<ReturnType<typeof workerMetricsLink>>;
    const deliver = fromPrimary(() => (link = workerMetricsLink()!));
    await link.send({ series: [], client: { counters: [], timers: [], gauges: [] } });
    expect(sent).toEqual([
      {
        chain: 'metrics',
        snapshot: { series: [], client: { counters: [], timers: [], gauges: [] } },
      },
    ]);

    const answer = link.prometheus();
    await new Promise((resolve) => setImmediate(resolve));
    const { id } = sent[1] as { id: number };
    expect(sent[1]).toEqual({ chain: 'prometheus', id });
    deliver({ chain: 'prometheus', id: id + 1000, body: 'not mine' });
    deliver({ chain: 'prometheus', id, contentType: 'text/plain', body: 'all' });
    await expect(answer).resolves.toEqual({ contentType: 'text/plain', body: 'all' });

    const failing = link.prometheus();
    await new Promise((resolve) => setImmediate(resolve));
    deliver({
      chain: 'prometheus',
      id: (sent[2] as { id: number }).id,
      error: 'Operation timed out.',
    });
    await expect(failing).rejects.toThrow('Operation timed out.');

    sendError = new Error('channel closed');
    await expect(link.prometheus()).rejects.toThrow('channel closed');
  });
});
