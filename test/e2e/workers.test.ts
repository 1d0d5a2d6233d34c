import net from 'node:net';
import os from 'node:os';
import {
  devSigningKey,
  mintToken,
  httpsRequest,
  httpsStub,
  json,
  metricsYml,
  startInfluxd,
  type Influxd,
  SECURITY_ON,
  CERTS,
  configDir,
  startExpectingFailure,
  startService,
  type ServiceProcess,
  deferred,
} from '@chain/testkit';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const PETSTORE = 'com.networknt.petstore-1.0.0';
const ENDPOINT = '/v2/pet/{petId}@get';
const DB = 'chain_workers_e2e';
const server = (workers: unknown, port = 0, serviceId = PETSTORE) =>
  `serviceId: ${serviceId}\nhttpsPort: ${port}\nip: 127.0.0.1\nworkers: ${workers}\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`;

const key = devSigningKey('100');
const GOOD = mintToken(key, { clientId: 'e2e-client', scope: ['read:pets'] });
const bearer = { Authorization: `Bearer ${GOOD}` };

const listeningLines = (p: ServiceProcess) => p.lines.filter((l) => /"msg":"listening on/.test(l));
const field = (line: string, name: string) => (JSON.parse(line) as Record<string, unknown>)[name];
/** The pid of each worker, from its `worker N serving` line. */
const workerPids = (p: ServiceProcess) =>
  p.lines
    .filter((l) => /"msg":"worker \d+ serving"/.test(l))
    .map((l) => ({ worker: field(l, 'worker') as number, pid: field(l, 'pid') as number }));
/** Resolves once `count` lines match (every line is looked at once, in order). */
const nthLine = (p: ServiceProcess, count: number, match: (l: string) => boolean) => {
  let seen = 0;
  return p.waitForLine((l) => match(l) && ++seen === count, 20_000);
};
/** The value of a Prometheus sample line `name{labels} value`, for the request counter. */
const promRequests = (text: string) => {
  const line = text
    .split('\n')
    .find((l) => l.startsWith('requests_total{') && l.includes(`endpoint="${ENDPOINT}"`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
};

describe('server.yml workers: 2 (the petstore, security on, metrics to a real InfluxDB)', () => {
  let influx: Influxd;
  let pet: ServiceProcess;
  const REQUESTS = 40;

  beforeAll(async () => {
    influx = await startInfluxd();
    pet = await startService('petstore', {
      configDir: configDir({
        'server.yml': server(2),
        'security.yml': SECURITY_ON,
        'metrics.yml': metricsYml(influx, DB, ['reportIntervalMs: 300']),
        'prometheus.yml': 'enabled: true\nenableHotspot: true\n',
      }),
    });
  });

  afterAll(async () => {
    await pet?.stop();
    await influx?.stop();
  });

  it('logs the listening line once, after both workers serve the one port', () => {
    const listening = listeningLines(pet);
    expect(listening).toHaveLength(1);
    expect(JSON.parse(listening[0])).toMatchObject({
      protocol: 'https',
      port: pet.port,
      workers: 2,
    });
    const workers = workerPids(pet);
    expect(workers.map((w) => w.worker).sort()).toEqual([1, 2]);
    expect(new Set(workers.map((w) => w.pid)).size).toBe(2);
    expect(workers.map((w) => w.pid)).not.toContain(pet.pid);
    // The workers' lines come before it: it is logged when every worker listens.
    const at = pet.lines.indexOf(listening[0]);
    for (const w of pet.lines.filter((l) => /worker \d+ serving/.test(l))) {
      expect(pet.lines.indexOf(w)).toBeLessThan(at);
    }
  });

  it('answers on both workers, and /metrics on either counts every request of the service', async () => {
    const answers = [];
    for (let i = 0; i < REQUESTS; i++) {
      answers.push(
        await httpsRequest(`https://localhost:${pet.port}/v2/pet/1`, { headers: bearer }),
      );
    }
    expect(answers.map((a) => a.status)).toEqual(Array(REQUESTS).fill(200));
    const audit = (l: string) => l.includes('"msg":"jwt verified"');
    await nthLine(pet, REQUESTS, audit);
    const auditWorkers = pet.lines.filter(audit).map((l) => field(l, 'worker'));
    expect(auditWorkers).toHaveLength(REQUESTS);
    // Fresh connections are handed out in turn.
    expect(new Set(auditWorkers)).toEqual(new Set([1, 2]));

    // Four fresh connections reach both workers; each answers with the service's total.
    const metrics = [];
    for (let i = 0; i < 4; i++) {
      metrics.push(await httpsRequest(`https://localhost:${pet.port}/metrics`));
    }
    expect(metrics.map((m) => [m.status, promRequests(m.text)])).toEqual(
      Array(4).fill([200, REQUESTS]),
    );
  });

  it('stops both workers on SIGTERM (exit 0) and InfluxDB holds exactly the requests made', async () => {
    const pids = workerPids(pet).map((w) => w.pid);
    expect(await pet.stop()).toBe(0);
    expect(pet.lines[pet.lines.length - 1]).toMatch(/"msg":"stopped"/);
    expect(pet.lines.filter((l) => /"msg":"stopped"/.test(l))).toHaveLength(3);
    // The primary's own line (no "worker" field): it asked both workers to stop.
    const primaryStopping = pet.lines.filter(
      (l) => /"msg":"stopping: finishing in-flight requests"/.test(l) && !/"worker":/.test(l),
    );
    expect(primaryStopping.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ reason: 'SIGTERM', workers: 2 }),
    ]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
    const [series] = await influx.query(
      DB,
      `SELECT sum("value") FROM "${PETSTORE}.request.count" WHERE "endpoint" = '${ENDPOINT}'`,
    );
    expect(series?.values[0][1]).toBe(REQUESTS);
    const [success] = await influx.query(
      DB,
      `SELECT sum("value") FROM "${PETSTORE}.success.count" WHERE "endpoint" = '${ENDPOINT}'`,
    );
    expect(success?.values[0][1]).toBe(REQUESTS);
    // One writer: every point of a series has a timestamp of its own (none overwritten).
    const [points] = await influx.query(
      DB,
      `SELECT "value" FROM "${PETSTORE}.request.count" WHERE "endpoint" = '${ENDPOINT}'`,
    );
    const times = points.values.map(([t]) => t);
    expect(new Set(times).size).toBe(times.length);
  });
});

describe('server.yml workers: graceful stop and replaced workers', () => {
  it('finishes an in-flight request on each worker on SIGTERM, then exits 0', async () => {
    let arrivals = 0;
    const bothArrived = deferred<void>();
    const release = deferred<void>();
    const slow = await httpsStub((_req, res) => {
      if (++arrivals === 2) bothArrived.resolve();
      void release.promise.then(() => json(res, 200, ['API B: Message 1', 'API B: Message 2']));
    });
    const a = await startService('api-a', {
      configDir: configDir({
        'server.yml': server(2, 0, 'e2e'),
        'client.yml': `tls:\n  trustStore: ${CERTS}/ca.crt\nrequest:\n  timeout: 5000\n`,
        'api_a.yml': `api_b_host: https://localhost:${slow.port}\napi_b_path: /v1/data\n`,
      }),
    });
    try {
      const inFlight = [1, 2].map(() => httpsRequest(`https://localhost:${a.port}/v1/data`));
      await bothArrived.promise; // one request waits on its downstream in each worker
      const exit = a.stop();
      await nthLine(a, 2, (l) =>
        /"worker":\d.*"msg":"stopping: finishing in-flight requests"/.test(l),
      );
      release.resolve();
      const answers = await Promise.all(inFlight);
      expect(answers.map((r) => [r.status, r.headers.connection, r.body])).toEqual(
        Array(2).fill([
          200,
          'close',
          ['API B: Message 1', 'API B: Message 2', 'API A: Message 1', 'API A: Message 2'],
        ]),
      );
      expect(await exit).toBe(0);
      await expect(httpsRequest(`https://localhost:${a.port}/health`)).rejects.toThrow(
        /ECONNREFUSED/,
      );
    } finally {
      release.resolve();
      await slow.close();
    }
  });

  it('replaces a worker that is killed, and goes on serving', async () => {
    const pet = await startService('petstore', {
      configDir: configDir({ 'server.yml': server(2) }),
    });
    try {
      const [first] = workerPids(pet);
      process.kill(first.pid, 'SIGKILL');
      const ended = await pet.waitForLine((l) =>
        /"msg":"worker \d+ ended \(signal SIGKILL\); starting another"/.test(l),
      );
      expect(JSON.parse(ended)).toMatchObject({ level: 50, worker: first.worker, pid: first.pid });
      await pet.waitForLine((l) => /"msg":"worker replaced"/.test(l), 20_000);
      const workers = workerPids(pet);
      expect(workers.map((w) => w.worker).sort()).toEqual([1, 2, 3]);
      for (let i = 0; i < 4; i++) {
        const res = await httpsRequest(`https://localhost:${pet.port}/v2/pet/1`);
        expect(res.status).toBe(200);
      }
      expect(listeningLines(pet)).toHaveLength(1);
      expect(await pet.stop()).toBe(0);
    } finally {
      await pet.stop();
    }
  });
});

describe('server.yml workers: what keeps the service from starting is said once', () => {
  const once = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('Cannot start:'));

  it.each([0, 65, 1.5, '"many"', 'true'])(
    'refuses workers: %s naming server.yml and the key',
    async (value) => {
      const dir = configDir({ 'server.yml': server(value) });
      const { code, stderr, stdout } = await startExpectingFailure('petstore', dir);
      expect(code).toBe(1);
      const lines = once(stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`${dir}/server.yml`);
      expect(lines[0]).toContain('"workers"');
      expect(lines[0]).toContain('must be a whole number from 1 to 64, or "auto"');
      expect(stdout).not.toMatch(/listening on/);
    },
  );

  it('says once why the workers cannot start (a service file of theirs), exit 1', async () => {
    const dir = configDir({
      'server.yml': server(2, 0, 'e2e'),
      'api_a.yml': 'api_b_host: 5\n',
    });
    const { code, stderr, stdout } = await startExpectingFailure('api-a', dir);
    expect(code).toBe(1);
    const lines = once(stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('api_a.yml');
    expect(stdout.split('\n').filter((l) => l.includes('"level":60'))).toHaveLength(1);
    expect(stdout).not.toMatch(/listening on/);
  });

  it('says once that the port is taken, exit 1', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      const dir = configDir({ 'server.yml': server(2, port) });
      const { code, stderr } = await startExpectingFailure('petstore', dir);
      expect(code).toBe(1);
      const lines = once(stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('EADDRINUSE');
    } finally {
      taken.close();
    }
  });

  it('takes workers: auto as one per core', async () => {
    const pet = await startService('petstore', {
      configDir: configDir({ 'server.yml': server('auto') }),
    });
    try {
      const cores = os.availableParallelism();
      const listening = listeningLines(pet);
      expect(listening).toHaveLength(1);
      if (cores > 1) expect(field(listening[0], 'workers')).toBe(cores);
      else expect(field(listening[0], 'workers')).toBeUndefined();
    } finally {
      expect(await pet.stop()).toBe(0);
    }
  });
});

describe('server.yml workers: a crash loop ends the service', () => {
  it('gives up (exit 1), saying why, when the 5th worker dies within 60 s', async () => {
    const pet = await startService('petstore', {
      configDir: configDir({ 'server.yml': server(2) }),
    });
    try {
      for (let killed = 1; killed <= 5; killed++) {
        // The newest worker that serves: each replacement is killed as soon as it serves.
        const { pid } = workerPids(pet).pop()!;
        process.kill(pid, 'SIGKILL');
        if (killed < 5) await nthLine(pet, killed, (l) => /"msg":"worker replaced"/.test(l));
      }
      expect(await pet.exited).toBe(1);
      const fatal = pet.lines.filter((l) => l.includes('"level":60'));
      expect(fatal).toHaveLength(1);
      expect(String(field(fatal[0], 'msg'))).toMatch(
        /^giving up: 5 workers ended within 60 s; the last: worker \d \(signal SIGKILL\)$/,
      );
      expect(pet.stderr()).toMatch(/^Stopping: 5 workers ended within 60 s; the last: worker \d /m);
      expect(pet.lines[pet.lines.length - 1]).toMatch(/"msg":"stopped after a failure"/);
    } finally {
      await pet.stop();
    }
  });
});
