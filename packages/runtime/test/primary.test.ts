import cluster from 'node:cluster';
import net from 'node:net';
import path from 'node:path';
import { CERTS, configDir, deferred, httpsRequest, waitFor } from '@chain/testkit';
import { loadServiceConfig } from '../src/index.js';
import { runPrimary } from '../src/workers.js';
import { captureLogger } from './support.js';

// The primary of server.yml `workers` run in this process, so that its code counts in the
// coverage: its workers are real processes of the built petstore (cluster.setupPrimary's exec:
// test/fixture/primary-worker.js), with the config folder the primary read. test/e2e/workers.test.ts runs the same as a whole
// service; here the test stands in for what ends the process: its signals and process.exit.

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const PETSTORE = path.resolve(import.meta.dirname, '..', '..', '..', 'services', 'petstore');

const serverYml = (port = 0) =>
  `serviceId: com.networknt.petstore-1.0.0\nhttpsPort: ${port}\nip: 127.0.0.1\nworkers: 2\n` +
  `shutdownTimeoutMs: 1000\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`;

interface Primary {
  log: ReturnType<typeof captureLogger>;
  /** The code process.exit was called with. */
  exit: Promise<number>;
  stderr: string[];
  /** Delivers a signal to the listeners the primary added (never to Jest's own). */
  signal(name: 'SIGTERM' | 'SIGINT'): void;
  msgs(): string[];
}

const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
  await waitFor('every worker gone', async () =>
    Object.keys(cluster.workers ?? {}).length === 0 ? true : undefined,
  );
  while (cleanups.length) cleanups.pop()!();
  vi.restoreAllMocks();
});

function startPrimary(port = 0): Primary {
  const dir = configDir({ 'server.yml': serverYml(port), 'metrics.yml': 'enabled: false\n' });
  const config = loadServiceConfig({
    bundledDir: path.join(PETSTORE, 'config'),
    overrideDir: dir,
  });
  cluster.setupPrimary({
    exec: path.join(import.meta.dirname, 'fixture', 'primary-worker.js'),
    args: [dir],
    silent: true,
  });
  const exited = deferred<number>();
  vi.spyOn(process, 'exit').mockImplementation(((code: number) => {
    exited.resolve(code);
  }) as never);
  const stderr: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, 'write').mockImplementation(((chunk: string, ...rest: never[]) => {
    if (String(chunk).startsWith('Cannot start') || String(chunk).startsWith('Stopping')) {
      stderr.push(String(chunk));
      return true;
    }
    return write(chunk, ...rest);
  }) as typeof process.stderr.write);
  const before = {
    SIGTERM: new Set(process.listeners('SIGTERM')),
    SIGINT: new Set(process.listeners('SIGINT')),
  };
  const log = captureLogger('info');
  runPrimary(config, log.logger);
  const added = (name: 'SIGTERM' | 'SIGINT') =>
    process.listeners(name).filter((l) => !before[name].has(l));
  for (const name of ['SIGTERM', 'SIGINT'] as const) {
    for (const l of added(name)) cleanups.push(() => process.removeListener(name, l));
  }
  return {
    log,
    exit: exited.promise,
    stderr,
    signal: (name) => {
      for (const l of added(name)) (l as (s: string) => void)(name);
    },
    msgs: () => log.lines().map((l) => String(l.msg)),
  };
}

const until = (p: Primary, what: string, match: (msgs: string[]) => boolean) =>
  waitFor(what, async () => (match(p.msgs()) ? true : undefined), { timeoutMs: 30_000 });

const listening = (msgs: string[]) => msgs.filter((m) => m.startsWith('listening on'));

describe('the primary of server.yml workers', () => {
  it('says "listening" once when every worker serves, answers on the port, and on SIGTERM stops the workers and exits 0', async () => {
    const p = startPrimary();
    await until(p, 'the listening line', (m) => listening(m).length === 1);
    const line = p.log.lines().find((l) => String(l.msg).startsWith('listening on'))!;
    expect(line).toMatchObject({ workers: 2, protocol: 'https' });
    expect(line.port).not.toBe(8443); // the test's server.yml (port 0), not the bundled one
    const answer = await httpsRequest(`https://localhost:${line.port as number}/health`);
    expect(answer.status).toBe(200);
    p.signal('SIGTERM');
    expect(await p.exit).toBe(0);
    expect(p.msgs()).toEqual(
      expect.arrayContaining([
        'signal received',
        'stopping: finishing in-flight requests',
        'stopped',
      ]),
    );
    expect(listening(p.msgs())).toHaveLength(1);
    expect(Object.keys(cluster.workers ?? {})).toHaveLength(0);
  });

  it('replaces a worker that dies after the service is up, saying which one and how', async () => {
    const p = startPrimary();
    await until(p, 'the listening line', (m) => listening(m).length === 1);
    const [first] = Object.values(cluster.workers ?? {});
    first!.process.kill('SIGKILL');
    await until(p, 'the replacement', (m) => m.includes('worker replaced'));
    expect(p.msgs()).toContainEqual(
      expect.stringMatching(/^worker \d ended \(signal SIGKILL\); starting another$/),
    );
    expect(listening(p.msgs())).toHaveLength(1);
    p.signal('SIGINT');
    expect(await p.exit).toBe(0);
  });

  it('gives up with exit 1 when the 5th worker dies within 60 s', async () => {
    const p = startPrimary();
    await until(p, 'the listening line', (m) => listening(m).length === 1);
    for (let killed = 1; killed <= 5; killed++) {
      const newest = Object.values(cluster.workers ?? {})
        .filter((w) => w !== undefined && !w.isDead())
        .pop()!;
      newest.process.kill('SIGKILL');
      if (killed < 5) {
        await until(
          p,
          `replacement ${killed}`,
          (m) => m.filter((x) => x === 'worker replaced').length === killed,
        );
      }
    }
    expect(await p.exit).toBe(1);
    const fatal = p.log.lines().filter((l) => l.level === 60);
    expect(fatal).toHaveLength(1);
    expect(String(fatal[0].msg)).toMatch(
      /^giving up: 5 workers ended within 60 s; the last: worker \d \(signal SIGKILL\)$/,
    );
    expect(p.stderr).toHaveLength(1);
    expect(p.stderr[0]).toMatch(/^Stopping: 5 workers ended within 60 s/);
  });

  it('says once, with exit 1, why the workers cannot start (the port is taken)', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => taken.close());
    const p = startPrimary((taken.address() as net.AddressInfo).port);
    expect(await p.exit).toBe(1);
    expect(p.stderr).toHaveLength(1);
    expect(p.stderr[0]).toMatch(/^Cannot start: .*EADDRINUSE/);
    expect(p.log.lines().filter((l) => l.level === 60)).toHaveLength(1);
    expect(listening(p.msgs())).toHaveLength(0);
  });
});
