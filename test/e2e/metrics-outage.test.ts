import net from 'node:net';
import {
  devSigningKey,
  mintToken,
  httpsRequest,
  metricsYml,
  startInfluxd,
  type Influxd,
  SECURITY_ON,
  CERTS,
  configDir,
  startService,
  type ServiceProcess,
} from '@chain/testkit';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

/**
 * The petstore (built, a real process) reporting every INTERVAL_MS to a real influxd that the
 * tests stop and start again: what is requested while InfluxDB is down reaches it afterwards, at
 * the time it was requested, counted once; a small `bufferIntervals` drops the oldest; SIGTERM
 * while InfluxDB is down writes the buffer when InfluxDB is back within the flush time, in a
 * single process and in the primary of `workers: 2`. The services log at debug level: a failed
 * report after the first of an outage is a debug line, the signal these tests wait on.
 */

const PETSTORE = 'com.networknt.petstore-1.0.0';
const ENDPOINT = '/v2/pet/{petId}@get';
const INTERVAL_MS = 300;

const key = devSigningKey('100');
const GOOD = mintToken(key, { clientId: 'e2e-client', scope: ['read:pets'] });

const OUTAGE = 'metrics: cannot report to InfluxDB';
const STILL_DOWN = 'metrics: InfluxDB still not answering';
const OVERFLOW = 'the most metrics.yml bufferIntervals allows';
const RESUMED = 'metrics: reporting to InfluxDB resumed';

async function startPetstore(
  influx: Pick<Influxd, 'port' | 'user' | 'password'>,
  db: string,
  extra: { metrics?: string[]; workers?: number } = {},
): Promise<ServiceProcess> {
  return startService('petstore', {
    configDir: configDir({
      'server.yml': `serviceId: ${PETSTORE}\nhttpsPort: 0\nip: 127.0.0.1\nworkers: ${extra.workers ?? 1}\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`,
      'security.yml': SECURITY_ON,
      'metrics.yml': metricsYml(influx as Influxd, db, [
        `reportIntervalMs: ${INTERVAL_MS}`,
        ...(extra.metrics ?? []),
      ]),
    }),
    env: { LOG_LEVEL: 'debug' },
  });
}

/** `n` requests, one after the other, each answered 200; returns when the last is answered. */
async function requests(service: ServiceProcess, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await httpsRequest(`https://localhost:${service.port}/v2/pet/1`, {
      headers: { Authorization: `Bearer ${GOOD}` },
    });
    expect(res.status).toBe(200);
  }
}

/** The message of a log line ('' for a line that is not one). */
function msgOf(line: string): string {
  try {
    return String((JSON.parse(line) as { msg?: unknown }).msg ?? '');
  } catch {
    return '';
  }
}

/** The `count`-th line from now on whose message contains `text`. */
function nextLine(service: ServiceProcess, text: string, count = 1, timeoutMs = 20_000) {
  const match = (l: string) => msgOf(l).includes(text);
  const target = service.lines.filter(match).length + count;
  let seen = 0;
  return service.waitForLine((l) => match(l) && ++seen === target, timeoutMs);
}

/**
 * Resolves once everything the service counted so far is in an interval it holds: the second
 * failed report from now on. (The first may come from an interval that ended just before the
 * last request was counted, its line read late; the second's interval ended an interval later.)
 */
const heldNow = (service: ServiceProcess) => nextLine(service, STILL_DOWN, 2);

const lineCount = (service: ServiceProcess, text: string) =>
  service.lines.filter((l) => msgOf(l).includes(text)).length;

const field = (line: string, name: string) => (JSON.parse(line) as Record<string, unknown>)[name];

/** The request count InfluxDB holds for the petstore's endpoint, in [from, to) (ms). */
/**
 * A service stopping with InfluxDB down: after two more failed tries InfluxDB comes back, and
 * the service exits 0. When it came back, and the service's last "resumed" line.
 */
async function backWhileStopping(
  service: ServiceProcess,
  influx: Influxd,
  stopped: Promise<number | null>,
) {
  await nextLine(service, STILL_DOWN, 2);
  const upAt = Date.now();
  await influx.resume();
  expect(await stopped).toBe(0);
  const resumed = service.lines.filter((l) => l.includes(`"msg":"${RESUMED}`)).at(-1);
  return { upAt, resumed };
}

async function requestCount(influx: Influxd, db: string, from = 0, to = 0): Promise<number> {
  const until = to ? ` AND time < ${to}ms` : '';
  const [series] = await influx
    .query(
      db,
      `SELECT sum("value") FROM "${PETSTORE}.request.count" WHERE "endpoint" = '${ENDPOINT}' AND time >= ${from}ms${until}`,
    )
    .catch(() => []);
  return (series?.values[0][1] as number | undefined) ?? 0;
}

/** Polls InfluxDB (it has no event to wait on) until it holds `expected` requests, 15 s at most. */
async function untilCount(influx: Influxd, db: string, expected: number): Promise<void> {
  const until = Date.now() + 15_000;
  let count = await requestCount(influx, db);
  while (count !== expected) {
    if (count > expected)
      throw new Error(`InfluxDB holds ${count} requests, more than ${expected}`);
    if (Date.now() > until) throw new Error(`InfluxDB holds ${count} requests, not ${expected}`);
    await new Promise((r) => setTimeout(r, 50));
    count = await requestCount(influx, db);
  }
}

describe('metrics across an InfluxDB outage (the petstore, one process)', () => {
  const DB = 'outage_e2e';
  let influx: Influxd;
  let pet: ServiceProcess;

  beforeAll(async () => {
    influx = await startInfluxd();
    pet = await startPetstore(influx, DB);
  });
  afterAll(async () => {
    await pet?.stop();
    await influx?.stop();
  });

  it('writes the requests made while InfluxDB was down once it is back, at their own time, counted once', async () => {
    await requests(pet, 4);
    await untilCount(influx, DB, 4);

    await influx.pause();
    const downAt = Date.now();
    await nextLine(pet, OUTAGE);
    await requests(pet, 3);
    await heldNow(pet);
    await requests(pet, 2);
    await heldNow(pet);
    const upAt = Date.now();
    await influx.resume();

    const resumed = await nextLine(pet, RESUMED);
    const late = field(resumed, 'late') as number;
    expect(late).toBeGreaterThanOrEqual(5);
    expect(field(resumed, 'msg')).toBe(`${RESUMED}; ${late} intervals written late, 0 dropped`);
    await requests(pet, 1);
    await untilCount(influx, DB, 4 + 3 + 2 + 1);
    // Written late with the timestamps of the intervals they were counted in: inside the outage,
    // in at least two intervals (the three, then the two).
    expect(await requestCount(influx, DB, downAt, upAt)).toBe(3 + 2);
    const [points] = await influx.query(
      DB,
      `SELECT "value" FROM "${PETSTORE}.request.count" WHERE "endpoint" = '${ENDPOINT}' AND time >= ${downAt}ms AND "value" > 0`,
    );
    const during = points.values.filter(([t]) => (t as number) < upAt);
    expect(during.length).toBeGreaterThanOrEqual(2);
    expect(points.values.slice(during.length).map(([, v]) => v)).toEqual([1]);
    // One line for the whole outage, however many intervals it lasted.
    expect(lineCount(pet, OUTAGE)).toBe(1);
    expect(lineCount(pet, OVERFLOW)).toBe(0);
  });

  // Last: it stops the service.
  it('writes the buffer on SIGTERM when InfluxDB is back within the flush time', async () => {
    const before = await requestCount(influx, DB);
    await influx.pause();
    const downAt = Date.now();
    await nextLine(pet, OUTAGE);
    await requests(pet, 3);
    const stopped = pet.stop();
    await pet.waitForLine((l) => l.includes('"msg":"signal received"'));
    // The service tries again while it stops (its last interval collected) ...
    // ... and writes what it holds once InfluxDB answers, then exits 0.
    const { upAt, resumed } = await backWhileStopping(pet, influx, stopped);
    expect(resumed).toMatch(
      new RegExp(`"msg":"${RESUMED}; \\d+ intervals? written late, 0 dropped"`),
    );
    expect(pet.lines.indexOf(resumed!)).toBeGreaterThan(
      pet.lines.findIndex((l) => l.includes('"msg":"signal received"')),
    );
    expect(pet.lines.at(-1)).toMatch(/"msg":"stopped"/);
    expect(await requestCount(influx, DB)).toBe(before + 3);
    expect(await requestCount(influx, DB, downAt, upAt)).toBe(3);
  });
});

describe('metrics across an InfluxDB outage: a small bufferIntervals', () => {
  const DB = 'overflow_e2e';
  let influx: Influxd;
  let pet: ServiceProcess;

  beforeAll(async () => {
    influx = await startInfluxd();
    pet = await startPetstore(influx, DB, { metrics: ['bufferIntervals: 2'] });
  });
  afterAll(async () => {
    await pet?.stop();
    await influx?.stop();
  });

  it('drops the oldest intervals past it, says it once, and counts them when InfluxDB is back', async () => {
    await requests(pet, 2);
    await untilCount(influx, DB, 2);
    await influx.pause();
    await nextLine(pet, OUTAGE);
    await requests(pet, 5);
    await heldNow(pet);
    // Two more intervals: the one of the five is pushed out.
    await nextLine(pet, STILL_DOWN, 2);
    const overflow = await pet.waitForLine((l) => l.includes(OVERFLOW));
    expect(field(overflow, 'msg')).toBe(
      'metrics: 2 intervals held, the most metrics.yml bufferIntervals allows; the oldest are dropped until InfluxDB answers',
    );
    await influx.resume();

    const resumed = await nextLine(pet, RESUMED);
    // The buffer was full: the one interval held and the one that has just ended.
    const dropped = field(resumed, 'dropped') as number;
    expect(dropped).toBeGreaterThanOrEqual(2);
    expect(field(resumed, 'msg')).toBe(`${RESUMED}; 1 interval written late, ${dropped} dropped`);
    await requests(pet, 1);
    // The five were in a dropped interval.
    await untilCount(influx, DB, 2 + 1);
    expect(lineCount(pet, OUTAGE)).toBe(1);
    expect(lineCount(pet, OVERFLOW)).toBe(1);
  });
});

/**
 * A TCP proxy to InfluxDB that can swallow InfluxDB's answers: a write InfluxDB applied whose
 * answer never comes back, the one fault of this kind a real influxd cannot be made to show.
 */
async function answerSwallowingProxy(target: number) {
  const state = { swallow: false };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    const swallow = state.swallow;
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    }
    client.pipe(upstream);
    if (swallow) upstream.on('data', () => undefined);
    else upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    // Swallowing, the client keeps waiting when InfluxDB has answered and closed.
    if (!swallow) upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    state,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('metrics: a write that timed out although InfluxDB applied it', () => {
  const DB = 'timeout_e2e';
  let influx: Influxd;
  let proxy: Awaited<ReturnType<typeof answerSwallowingProxy>>;
  let pet: ServiceProcess;

  beforeAll(async () => {
    influx = await startInfluxd();
    proxy = await answerSwallowingProxy(influx.port);
    pet = await startPetstore({ ...influx, port: proxy.port }, DB);
  });
  afterAll(async () => {
    await pet?.stop();
    await proxy?.close();
    await influx?.stop();
  });

  it('is sent again with the same points, and InfluxDB counts its requests once', async () => {
    await requests(pet, 2);
    await untilCount(influx, DB, 2);
    proxy.state.swallow = true;
    await requests(pet, 3);
    // InfluxDB has them, but the service never hears so: its write times out (10 s).
    await untilCount(influx, DB, 2 + 3);
    const outage = await nextLine(pet, OUTAGE, 1, 20_000);
    expect(field(outage, 'reason')).toBe('Request timed out');
    proxy.state.swallow = false;
    const resumed = await nextLine(pet, RESUMED);
    expect(field(resumed, 'late')).toBeGreaterThanOrEqual(1);
    await requests(pet, 1);
    // The three were sent twice and are counted once: the same points overwrite each other.
    await untilCount(influx, DB, 2 + 3 + 1);
  });
});

describe('metrics across an InfluxDB outage: workers: 2, the primary the one writer', () => {
  const DB = 'workers_outage_e2e';
  let influx: Influxd;
  let pet: ServiceProcess;

  beforeAll(async () => {
    influx = await startInfluxd();
    pet = await startPetstore(influx, DB, { workers: 2 });
  });
  afterAll(async () => {
    await pet?.stop();
    await influx?.stop();
  });

  it('holds what both workers counted while InfluxDB is down, and writes it on SIGTERM once InfluxDB is back', async () => {
    await requests(pet, 4);
    await untilCount(influx, DB, 4);
    await influx.pause();
    const downAt = Date.now();
    await nextLine(pet, OUTAGE);
    // Fresh connections go to both workers in turn.
    await requests(pet, 6);
    const served = new Set(
      pet.lines.filter((l) => l.includes('"msg":"jwt verified"')).map((l) => field(l, 'worker')),
    );
    expect(served).toEqual(new Set([1, 2]));
    const stopped = pet.stop();
    // The workers hand their last intervals over and stop ...
    const workerStopped = (l: string) => /"worker":\d.*"msg":"stopped"/.test(l);
    let seen = 0;
    await pet.waitForLine((l) => workerStopped(l) && ++seen === 2, 20_000);
    // ... the primary tries again ...
    // ... and writes everything once InfluxDB answers, then exits 0.
    const { upAt, resumed } = await backWhileStopping(pet, influx, stopped);
    expect(resumed).toBeDefined();
    expect(field(resumed!, 'worker')).toBeUndefined();
    const workersStopped = pet.lines.filter(workerStopped);
    expect(workersStopped).toHaveLength(2);
    expect(pet.lines.indexOf(resumed!)).toBeGreaterThan(pet.lines.indexOf(workersStopped[1]));
    expect(await requestCount(influx, DB)).toBe(4 + 6);
    expect(await requestCount(influx, DB, downAt, upAt)).toBe(6);
    expect(lineCount(pet, OUTAGE)).toBe(1);
  });
});
