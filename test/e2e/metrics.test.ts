import os from 'node:os';
import {
  devSigningKey,
  mintToken,
  httpsRequest,
  httpsStub,
  json,
  type Stub,
  metricsYml,
  startInfluxd,
  type Influxd,
  SECURITY_ON,
  CERTS,
  configDir,
  startService,
  type ServiceProcess,
  EIGHT,
} from '@chain/testkit';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const DB = 'chain_metrics_e2e';
const INTERVAL_MS = 500;
/** A request is counted on 'finish'; a report stamped this long after the last answer is past it. */
const MARGIN_MS = 300;
const COUNTERS = ['request', 'success', 'auth_error', 'request_error', 'server_error'] as const;
type Counter = (typeof COUNTERS)[number];

const LETTERS = ['a', 'b', 'c', 'd'] as const;
type Letter = (typeof LETTERS)[number];
const serviceId = (x: Letter) => `com.networknt.api${x}-1.0.0`;
const next: Record<Letter, Letter | undefined> = { a: 'b', b: 'c', c: 'd', d: undefined };

const key = devSigningKey('100');
const GOOD = mintToken(key, { clientId: 'e2e-client', scope: ['api_a.r'] });
const WRONG_SCOPE = mintToken(key, { clientId: 'e2e-client', scope: ['api_z.r'] });

/**
 * What the mix of calls below must leave, per service and series (endpoint x clientId). Good
 * calls go through the whole chain, each service passing the caller's token on, so every
 * service sees `e2e-client`. A token refused for its scope (403) still has a verified client, as
 * in light-4j; a missing token leaves none: `unknown`. A path or
 * method not in the spec has no operation: endpoint `unknown`.
 */
type Expected = [endpoint: string, clientId: string, counts: Partial<Record<Counter, number>>];
const EXPECTED: Record<Letter, Expected[]> = {
  a: [
    ['/v1/data@get', 'e2e-client', { request: 5, success: 3, auth_error: 2 }],
    ['/v1/data@get', 'unknown', { request: 2, auth_error: 2 }],
    ['unknown', 'unknown', { request: 2, request_error: 2 }],
  ],
  b: [['/v1/data@get', 'e2e-client', { request: 3, success: 3 }]],
  c: [['/v1/data@get', 'e2e-client', { request: 3, success: 3 }]],
  d: [['/v1/data@get', 'e2e-client', { request: 3, success: 3 }]],
};

describe('metrics of the four chain services in a real InfluxDB and on GET /metrics', () => {
  let influx: Influxd;
  let tokenServer: Stub;
  const services = {} as Record<Letter, ServiceProcess>;
  let callsEnd = 0;
  const cleanFrom = {} as Record<Letter, number>;

  beforeAll(async () => {
    influx = await startInfluxd();
    // A light-oauth2 token endpoint: client-credentials tokens signed by the primary key.
    tokenServer = await httpsStub((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const basic = (req.headers.authorization ?? '').replace(/^Basic /, '');
        const clientId = Buffer.from(basic, 'base64').toString().split(':')[0];
        const scope = (form.get('scope') ?? '').split(' ').filter(Boolean);
        json(res, 200, {
          access_token: mintToken(key, { clientId, scope }),
          token_type: 'bearer',
          expires_in: 600,
        });
      });
    });
    for (const x of ['d', 'c', 'b', 'a'] as const) {
      const y = next[x];
      services[x] = await startService(`api-${x}`, {
        configDir: configDir({
          'server.yml': `serviceId: ${serviceId(x)}\nhttpsPort: 0\nip: 127.0.0.1\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`,
          'security.yml': SECURITY_ON,
          'client.yml': [
            `tls:\n  trustStore: ${CERTS}/ca.crt`,
            `request:\n  timeout: 3000`,
            `oauth:\n  token:\n    server_url: ${tokenServer.url}`,
            `    client_credentials:\n      uri: /oauth2/token\n      client_id: api-${x}-client`,
            `      scope: [api_${y ?? 'x'}.r]\n`,
          ].join('\n'),
          'metrics.yml': metricsYml(influx, DB, [
            'reportInMinutes: 1',
            `reportIntervalMs: ${INTERVAL_MS}`,
          ]),
          'prometheus.yml': 'enabled: true\nenableHotspot: true\n',
          ...(y && {
            [`api_${x}.yml`]: `api_${y}_host: https://localhost:${services[y].port}\napi_${y}_path: /v1/data\n`,
          }),
        }),
      });
    }

    // The known mix, all on api-a.
    const a = `https://localhost:${services.a.port}`;
    const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
    const answers = [
      ...(await Promise.all(
        [1, 2, 3].map(() => httpsRequest(`${a}/v1/data`, { headers: bearer(GOOD) })),
      )),
      await httpsRequest(`${a}/v1/data`),
      await httpsRequest(`${a}/v1/data`),
      await httpsRequest(`${a}/v1/data`, { headers: bearer(WRONG_SCOPE) }),
      await httpsRequest(`${a}/v1/data`, { headers: bearer(WRONG_SCOPE) }),
      await httpsRequest(`${a}/v1/nothing`),
      await httpsRequest(`${a}/v1/data`, { method: 'POST', headers: bearer(GOOD) }),
    ];
    callsEnd = Date.now();
    expect(answers.map((r) => [r.status, (r.body as { code?: string }).code ?? r.body])).toEqual([
      [200, EIGHT],
      [200, EIGHT],
      [200, EIGHT],
      [401, 'ERR10002'],
      [401, 'ERR10002'],
      [403, 'ERR10005'],
      [403, 'ERR10005'],
      [404, 'ERR10007'],
      [405, 'ERR10008'],
    ]);

    // A report covers the time since the one before it, so the first report after the last
    // answer may still hold some calls; from each service's second report on, none.
    const after = callsEnd + MARGIN_MS;
    const until = Date.now() + 20_000;
    for (const x of LETTERS) {
      for (;;) {
        const [series] = await influx
          .query(DB, `SELECT "value" FROM "${serviceId(x)}.request.count" WHERE time > ${after}ms`)
          .catch(() => []);
        const times = [...new Set((series?.values ?? []).map(([t]) => t as number))].sort();
        if (times.length >= 2) {
          cleanFrom[x] = times[1];
          break;
        }
        if (Date.now() > until) throw new Error(`api-${x} did not report in time`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });

  afterAll(async () => {
    await Promise.all(Object.values(services).map((s) => s.stop()));
    await tokenServer?.close();
    await influx?.stop();
  });

  /** Whether a `<measurement> <tags>` key is a request counter (not the client side's). */
  const isRequestCounter = (key: string) =>
    COUNTERS.some((c) => key.split(' ')[0].endsWith(`.${c}.count`));

  /** `<measurement> <tags>` -> value, for every series an InfluxQL aggregate returns. */
  async function byMeasurementAndTags(q: string): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const s of await influx.query(DB, q)) {
      const { hostname, ipAddress, ...tags } = s.tags ?? {};
      expect(hostname).toBe(os.hostname());
      expect(ipAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      const tagText = Object.entries(tags)
        .filter(([, v]) => v !== '')
        .sort(([k1], [k2]) => k1.localeCompare(k2))
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      out[`${s.name} ${tagText}`] = s.values[0][1];
    }
    return out;
  }

  it('finds exactly the calls per measurement and tag, in the service view and the client view', async () => {
    const expected: Record<string, number> = {};
    for (const x of LETTERS) {
      for (const [endpoint, clientId, counts] of EXPECTED[x]) {
        for (const counter of COUNTERS) {
          const value = counts[counter] ?? 0;
          expected[`${serviceId(x)}.${counter}.count clientId=${clientId},endpoint=${endpoint}`] =
            value;
          expected[`${clientId}.${counter}.count apiName=${serviceId(x)},endpoint=${endpoint}`] =
            value;
        }
      }
    }
    const actual = await byMeasurementAndTags(
      `SELECT sum("value") FROM /\\.count$/ WHERE time <= now() GROUP BY *`,
    );
    expect(Object.fromEntries(Object.entries(actual).filter(([k]) => isRequestCounter(k)))).toEqual(
      expected,
    );
  });

  it("counts the client side too: each calling service's one token renewal, its callers' waits, no failure", async () => {
    const actual = await byMeasurementAndTags(
      `SELECT sum("value") FROM /\\.(token_|circuit_|key_fetch|downstream_retry)/ WHERE time <= now() GROUP BY *`,
    );
    for (const x of ['a', 'b', 'c'] as const) {
      const id = serviceId(x);
      expect(actual[`${id}.token_renewal.count clientId=api-${x}-client,trigger=cold`]).toBe(1);
      // The three first calls came together: one, two or three of them waited for the token.
      const waited = actual[`${id}.token_wait.count clientId=api-${x}-client,outcome=ok`] as number;
      expect(waited).toBeGreaterThanOrEqual(1);
      expect(waited).toBeLessThanOrEqual(3);
      const [times] = await influx.query(
        DB,
        `SELECT "value" FROM "${id}.token_wait_time.max" WHERE "clientId" = 'api-${x}-client'`,
      );
      expect(times.values.length).toBeGreaterThanOrEqual(1);
      expect(times.values[0][1] as number).toBeLessThan(3000);
    }
    // Nothing failed, no circuit opened, nothing was sent twice, in any service.
    const failures = Object.keys(actual).filter((k) =>
      /token_renewal_error|circuit_open|circuit_rejected|downstream_retry/.test(k),
    );
    expect(failures).toEqual([]);
  });

  it('starts every interval after the calls from zero', async () => {
    for (const x of LETTERS) {
      const id = serviceId(x);
      const since = await byMeasurementAndTags(
        `SELECT max("value") FROM /\\.count$/ WHERE time >= ${cleanFrom[x]}ms GROUP BY *`,
      );
      const mine = Object.entries(since).filter(
        ([k]) => isRequestCounter(k) && (k.startsWith(`${id}.`) || k.includes(`apiName=${id},`)),
      );
      // Every series of the service is reported again, and only with zeros.
      expect(mine).toHaveLength(EXPECTED[x].length * COUNTERS.length * 2);
      expect(new Set(mine.map(([, v]) => v))).toEqual(new Set([0]));
      // An interval without requests has no response time, in either view.
      const escaped = id.replace(/[.]/g, '\\.');
      const serviceView = `SELECT * FROM /^${escaped}\\.response_time/`;
      const clientView = `SELECT * FROM /response_time/ WHERE "apiName" = '${id}'`;
      // (The same queries over all time do find the timer: they can fail.)
      expect(await influx.query(DB, serviceView)).toHaveLength(3);
      expect(await influx.query(DB, clientView)).not.toEqual([]);
      const t = `time >= ${cleanFrom[x]}ms`;
      expect(await influx.query(DB, `${serviceView} WHERE ${t}`)).toEqual([]);
      expect(await influx.query(DB, `${clientView} AND ${t}`)).toEqual([]);
    }
  });

  it('writes the response time of each interval in milliseconds: min <= mean <= max', async () => {
    for (const x of LETTERS) {
      const all = await Promise.all(
        ['min', 'mean', 'max'].map((s) =>
          influx.query(
            DB,
            `SELECT "value" FROM "${serviceId(x)}.response_time.${s}" WHERE "clientId" = 'e2e-client'`,
          ),
        ),
      );
      const [min, mean, max] = all.map(([s]) => s.values as [number, number][]);
      expect(min.length).toBeGreaterThanOrEqual(1);
      expect(mean.map(([t]) => t)).toEqual(min.map(([t]) => t));
      expect(max.map(([t]) => t)).toEqual(min.map(([t]) => t));
      min.forEach(([, low], i) => {
        expect(low).toBeGreaterThan(0);
        expect(low).toBeLessThanOrEqual(mean[i][1]);
        expect(mean[i][1]).toBeLessThanOrEqual(max[i][1]);
        expect(max[i][1]).toBeLessThan(3000);
      });
    }
  });

  it('serves the same totals on GET /metrics of every service', async () => {
    for (const x of LETTERS) {
      const res = await httpsRequest(`https://localhost:${services[x].port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      const totals: Record<string, number> = {};
      for (const line of res.text.split('\n')) {
        const m = /^(\w+)_total\{endpoint="([^"]*)",clientId="([^"]*)"\} (\d+)$/.exec(line);
        if (m) totals[`${m[1]} ${m[2]} ${m[3]}`] = Number(m[4]);
      }
      const expected: Record<string, number> = {};
      for (const [endpoint, clientId, counts] of EXPECTED[x]) {
        for (const [counter, value] of Object.entries(counts)) {
          expected[`${counter === 'request' ? 'requests' : counter} ${endpoint} ${clientId}`] =
            value;
        }
      }
      expect(totals).toEqual(expected);
      // One timing per request of the series, whatever its outcome.
      const timed = EXPECTED[x].find(([e, c]) => e === '/v1/data@get' && c === 'e2e-client')!;
      expect(res.text).toMatch(
        new RegExp(
          `^response_time_seconds_count\\{endpoint="/v1/data@get",clientId="e2e-client"\\} ${timed[2].request}$`,
          'm',
        ),
      );
      expect(res.text).toMatch(/^process_resident_memory_bytes \d+/m);
    }
  });

  it('created the database itself and never logged the password or a failed report', () => {
    for (const x of LETTERS) {
      const log = services[x].lines.join('\n');
      expect(log).not.toContain(influx.password);
      expect(log).not.toContain('cannot report to InfluxDB');
      expect(log).toContain('"msg":"metrics: reporting to InfluxDB"');
    }
  });

  // Last: it changes what InfluxDB holds.
  it('goes on reporting after InfluxDB was down, writes what it held then, and the requests never noticed', async () => {
    const a = `https://localhost:${services.a.port}`;
    const good = () =>
      httpsRequest(`${a}/v1/data`, { headers: { Authorization: `Bearer ${GOOD}` } });
    const failedReports = () =>
      services.a.lines.filter((l) => l.includes('cannot report to InfluxDB')).length;

    await influx.pause();
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      expect((await good()).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);
    }
    await services.a.waitForLine((l) => l.includes('cannot report to InfluxDB'));
    await influx.resume();
    await services.a.waitForLine((l) => l.includes('reporting to InfluxDB resumed'), 15_000);
    // Said once for the outage, not per interval, request or retry.
    expect(failedReports()).toBe(1);

    const resumedAt = Date.now();
    expect((await good()).status).toBe(200);
    expect((await good()).status).toBe(200);
    const requests = async (since: number) => {
      const [series] = await influx.query(
        DB,
        `SELECT sum("value") FROM "${serviceId('a')}.request.count" WHERE "clientId" = 'e2e-client' AND time > ${since}ms`,
      );
      return series?.values[0][1];
    };
    await waitFor(async () => (await requests(resumedAt)) === 2);
    // The intervals InfluxDB missed were held and written late, each once.
    const mix = EXPECTED.a.find(([e, c]) => e === '/v1/data@get' && c === 'e2e-client')!;
    expect(await requests(0)).toBe(mix[2].request! + 3 + 2);
  });
});

/** Polls InfluxDB (it has no event to wait on) until the condition holds, 15 s at most. */
async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`not in time: ${condition.toString()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
