import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { loadServiceConfig, startService, type RunningService } from '../src/index.js';
import { configDir, CERTS } from '@chain/testkit';
import { deferred, fixtureService, FIXTURE, FRAMEWORKS, type FixtureService } from './support.js';

/** A keep-alive GET on its own agent (one connection), resolved with status, headers and body. */
function get(port: number, path: string, agent: http.Agent) {
  return new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }),
        );
      })
      .on('error', reject);
  });
}

describe.each(FRAMEWORKS)('startService on the %s host', (framework) => {
  let running: RunningService;
  let fixture: FixtureService;
  const lines: string[] = [];

  beforeAll(async () => {
    running = await startService({
      bundledDir: FIXTURE,
      loaderOptions: { overrideDir: configDir({}) },
      logDestination: { write: (line: string) => void lines.push(line) },
      createApp: (config, logger) => {
        fixture = fixtureService(
          { ...config, server: { ...config.server, framework } },
          undefined,
          { logger, lines: () => [], text: () => '' },
        );
        return fixture.app;
      },
    });
  });
  afterAll(() => running.close());

  it('listens on the port it logs, on the host server.yml names', async () => {
    const port = running.ports.http!;
    expect(running.ports.https).toBeUndefined();
    const listening = lines.map((l) => JSON.parse(l)).find((l) => /^listening/.test(l.msg));
    expect(listening).toMatchObject({ protocol: 'http', port, framework, ip: '127.0.0.1' });
    const agent = new http.Agent();
    expect(await get(port, '/v1/open', agent)).toMatchObject({ status: 200, body: '["open"]' });
  });

  it('stops: in-flight requests finish with Connection: close, then nothing is accepted (well before shutdownTimeoutMs)', async () => {
    const port = running.ports.http!;
    const busy = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const other = new http.Agent({ keepAlive: true, maxSockets: 1 });
    // Two connections, each in the middle of a request when the service stops.
    const slow = get(port, '/v1/slow', busy);
    await fixture.slowArrived.promise;
    const blocker = deferred<void>();
    const secondArrived = deferred<void>();
    // `other` holds a connection open with a request of its own that is in flight too.
    const held = new Promise<string | undefined>((resolve) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        path: '/v1/items',
        method: 'POST',
        agent: other,
      });
      req.write('part of a body');
      req.on('socket', (s) => s.once('connect', () => secondArrived.resolve()));
      void blocker.promise.then(() => req.end());
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers.connection));
      });
    });
    await secondArrived.promise;

    const stopped = running.close();
    fixture.releaseSlow.resolve();
    expect(await slow).toEqual({ status: 200, connection: 'close', body: '["slow"]' });
    blocker.resolve();
    expect(await held).toBe('close');
    await stopped;
    expect(lines.some((l) => l.includes('stopping: finishing in-flight requests'))).toBe(true);
    await expect(get(port, '/v1/open', new http.Agent())).rejects.toThrow(/ECONNREFUSED/);
    busy.destroy();
    other.destroy();
  });
});

describe('server.yml keyFile and certFile', () => {
  const folder = (files: Record<string, string>) =>
    configDir({
      'server.yml': `serviceId: t\nenableHttps: true\n${Object.entries(files)
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n')}\n`,
    });
  const config = (overrideDir: string) => loadServiceConfig({ bundledDir: FIXTURE, overrideDir });
  const file = (name: string) => path.join(CERTS, name);

  it('loads a key and its certificate, read once when server.yml loads', () => {
    const { tls } = config(
      folder({ keyFile: file('server.key'), certFile: file('server.crt') }),
    ).server;
    expect(tls && 'key' in tls && tls.key.equals(fs.readFileSync(file('server.key')))).toBe(true);
  });

  it.each([
    [
      'a certificate as keyFile',
      { keyFile: file('server.crt'), certFile: file('server.crt') },
      'keyFile": is not a PEM private key (or it is encrypted)',
    ],
    [
      'a key as certFile',
      { keyFile: file('server.key'), certFile: file('server.key') },
      'certFile": is not a PEM certificate',
    ],
    [
      'a key of another certificate',
      { keyFile: file('primary.key'), certFile: file('server.crt') },
      'keyFile": is not the private key of the certificate in certFile',
    ],
  ])('refuses %s, naming the file and the key', (_name, files, message) => {
    const dir = folder(files);
    expect(() => config(dir)).toThrow(
      `Config error in ${path.resolve(dir)}/server.yml at key "${message}`,
    );
  });
});

describe('startService when it cannot start, and on SIGTERM', () => {
  /** process.exit and stderr, caught: the process under test is Jest's. */
  function trap() {
    const stderr: string[] = [];
    const exit = vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
      throw Object.assign(new Error('exit'), { exitCode: code });
    }) as never);
    const write = vi
      .spyOn(process.stderr, 'write')
      .mockImplementation(((chunk: string) => stderr.push(chunk)) as never);
    return {
      stderr,
      restore: () => {
        exit.mockRestore();
        write.mockRestore();
      },
    };
  }

  it('a config error: one line naming file and key on stderr, a fatal log line, exit 1', async () => {
    const t = trap();
    const lines: string[] = [];
    const dir = configDir({ 'server.yml': 'serviceId: s\nenableHttps: false\nhttpPort: "80"\n' });
    try {
      await expect(
        startService({
          bundledDir: FIXTURE,
          loaderOptions: { overrideDir: dir },
          logDestination: { write: (l: string) => void lines.push(l) },
          createApp: () => {
            throw new Error('not reached');
          },
        }),
      ).rejects.toMatchObject({ exitCode: 1 });
    } finally {
      t.restore();
    }
    expect(t.stderr).toEqual([
      `Cannot start: Config error in ${dir}/server.yml at key "httpPort": expected number, received string\n`,
    ]);
    expect(lines).toEqual([]); // the logger is made from server.yml, which failed
  });

  it('any other failure at start: one line on stderr, the error in the log, exit 1', async () => {
    const t = trap();
    const lines: string[] = [];
    try {
      await expect(
        startService({
          bundledDir: FIXTURE,
          loaderOptions: { overrideDir: configDir({}) },
          logDestination: { write: (l: string) => void lines.push(l) },
          createApp: () => {
            throw new Error('the app cannot be built');
          },
        }),
      ).rejects.toMatchObject({ exitCode: 1 });
    } finally {
      t.restore();
    }
    expect(t.stderr).toEqual(['Cannot start: the app cannot be built\n']);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 60,
      msg: 'cannot start: the app cannot be built',
    });
  });

  it('a port in use: exit 1 with the listen error', async () => {
    const first = await startService({
      bundledDir: FIXTURE,
      loaderOptions: { overrideDir: configDir({}) },
      logDestination: { write: () => undefined },
      createApp: (config, logger) =>
        fixtureService(config, undefined, { logger, lines: () => [], text: () => '' }).app,
    });
    const t = trap();
    try {
      await expect(
        startService({
          bundledDir: FIXTURE,
          loaderOptions: {
            overrideDir: configDir({
              'server.yml': `serviceId: s\nip: 127.0.0.1\nenableHttps: false\nenableHttp: true\nhttpPort: ${first.ports.http}\n`,
            }),
          },
          logDestination: { write: () => undefined },
          createApp: (config, logger) =>
            fixtureService(config, undefined, { logger, lines: () => [], text: () => '' }).app,
        }),
      ).rejects.toMatchObject({ exitCode: 1 });
    } finally {
      t.restore();
      await first.close();
    }
    expect(t.stderr[0]).toMatch(
      /^Cannot start: listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+\n$/,
    );
  });

  it('SIGTERM: stops, logs its last line, exits 0', async () => {
    const lines: string[] = [];
    const running = await startService({
      bundledDir: FIXTURE,
      loaderOptions: { overrideDir: configDir({}) },
      logDestination: { write: (l: string) => void lines.push(l) },
      createApp: (config, logger) =>
        fixtureService(config, undefined, { logger, lines: () => [], text: () => '' }).app,
    });
    const exited = new Promise<number | undefined>((resolve) => {
      const exit = vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
        exit.mockRestore();
        resolve(code);
      }) as never);
    });
    process.emit('SIGTERM', 'SIGTERM');
    expect(await exited).toBe(0);
    expect(lines.map((l) => JSON.parse(l).msg).slice(-3)).toEqual([
      'signal received',
      'stopping: finishing in-flight requests',
      'stopped',
    ]);
    await running.close(); // idempotent
  });
});
