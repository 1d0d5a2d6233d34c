import fs from 'node:fs';
import path from 'node:path';
import {
  httpsRequest,
  type Answer,
  startChain,
  type Letter,
  type RunningChain,
  YAML,
  clientCredentialsToken,
  startTokenServer,
  type TokenServerProcess,
  promtoolCheckMetrics,
  requireProgram,
  startPrometheus,
  type PrometheusServer,
  type Sample,
  CERTS,
  ROOT,
  configDir,
  startService,
  type ServiceProcess,
} from '@chain/testkit';

// A real Prometheus (Debian's `prometheus` package, installed by scripts/test-infra.sh) against
// the services as processes: promtool parses every service's /metrics, and a Prometheus server
// of the test's own scrapes them over HTTPS with the development CA, with the scrape jobs of
// docs/kubernetes.md (only their discovery swapped for the processes' loopback addresses).
// Its HTTP API must then say every target is up and hold exactly the requests made.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const SERVICES = ['api-a', 'api-b', 'api-c', 'api-d', 'petstore'] as const;
type Service = (typeof SERVICES)[number];

/** The deployed prometheus.yml (compose and Kubernetes say the same). */
const PROMETHEUS_YML = fs.readFileSync(
  path.join(ROOT, 'deploy', 'kubernetes', 'base', 'config', 'api-a', 'prometheus.yml'),
  'utf8',
);

interface ScrapeJob {
  job_name: string;
  scheme?: string;
  metrics_path?: string;
  tls_config?: { ca_file?: string; server_name?: string };
  kubernetes_sd_configs?: { role: string; namespaces?: { names: string[] } }[];
  relabel_configs?: { source_labels: string[]; regex: string; action: string }[];
  static_configs?: { targets: string[] }[];
}

/** The scrape_configs of docs/kubernetes.md (its YAML block that has them). */
function documentedJobs(): ScrapeJob[] {
  const docs = fs.readFileSync(path.join(ROOT, 'docs/kubernetes.md'), 'utf8');
  const blocks = [...docs.matchAll(/```yaml\n([\s\S]*?)```/g)].map(([, b]) => b);
  const block = blocks.find((b) => /^scrape_configs:/m.test(b));
  if (!block) throw new Error('docs/kubernetes.md has no YAML block with scrape_configs');
  return (YAML.parse(block) as { scrape_configs: ScrapeJob[] }).scrape_configs;
}

/** The Service of a workload in the base manifests. */
function serviceManifest(name: Service): { ports: { name: string; port: number }[] } {
  const docs = YAML.parseAllDocuments(
    fs.readFileSync(path.join(ROOT, 'deploy', 'kubernetes', 'base', `${name}.yaml`), 'utf8'),
  ).map((d) => d.toJSON() as { kind: string; metadata: { name: string }; spec: unknown });
  const service = docs.find((d) => d.kind === 'Service' && d.metadata.name === name);
  return service!.spec as { ports: { name: string; port: number }[] };
}

/** `job endpoint clientId` -> value, of an instant vector. */
const byLabels = (samples: Sample[], labels = ['job', 'endpoint', 'clientId']) =>
  Object.fromEntries(
    samples.map((s) => [labels.map((l) => s.metric[l]).join(' '), Number(s.value[1])]),
  );

const CAMEL_CASE = "label names should be written in 'snake_case' not 'camelCase'";

describe('a real Prometheus scrapes the services over HTTPS', () => {
  let ts: TokenServerProcess;
  let chain: RunningChain;
  let petstore: ServiceProcess;
  let prometheus: PrometheusServer | undefined;
  let userToken: string;
  const port = {} as Record<Service, number>;

  const get = (service: Service, p: string, token?: string): Promise<Answer> =>
    httpsRequest(`https://localhost:${port[service]}${p}`, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    });

  beforeAll(async () => {
    // Fails here, saying what to run, rather than skipping.
    requireProgram('prometheus');
    requireProgram('promtool');
    ts = await startTokenServer();
    chain = await startChain({ ts, files: () => ({ 'prometheus.yml': PROMETHEUS_YML }) });
    petstore = await startService('petstore', {
      configDir: configDir({
        'server.yml': `serviceId: com.networknt.petstore-1.0.0\nip: 127.0.0.1\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`,
        'security.yml': `enableVerifyJwt: true\nenableVerifyScope: true\njwt:\n  certificate:\n    '100': ${CERTS}/primary.crt\n    '101': ${CERTS}/secondary.crt\n`,
        'client.yml': `tls:\n  trustStore: ${CERTS}/ca.crt\noauth:\n  key:\n    server_url: ${ts.keyUrl}\n    uri: /oauth2/key\n    client_id: petstore-client\n`,
        'prometheus.yml': PROMETHEUS_YML,
      }),
    });
    for (const letter of ['a', 'b', 'c', 'd'] as Letter[]) {
      port[`api-${letter}`] = chain.services[letter].port;
    }
    port.petstore = petstore.port;
    userToken = await clientCredentialsToken(
      ts.tokenUrl,
      'chain-user',
      'chain-user-secret',
      'api_a.r read:pets',
    );
  });

  afterAll(async () => {
    await prometheus?.stop();
    await Promise.all([chain?.stop(), petstore?.stop(), ts?.stop()]);
  });

  /** What each request of the test leaves, `job endpoint clientId` -> requests_total. */
  const expected: Record<string, number> = {};
  const count = (key: string, n = 1) => (expected[key] = (expected[key] ?? 0) + n);

  /** `good` calls of api-a through the chain, `anonymous` refused ones; the same on the petstore. */
  async function traffic(good: number, anonymous: number): Promise<void> {
    for (let i = 0; i < good; i++) {
      const answer = await get('api-a', '/v1/data', userToken);
      expect(answer.status).toBe(200);
      // Each hop verifies the caller's token: the user's client on every service.
      for (const s of ['api-a', 'api-b', 'api-c', 'api-d']) count(`${s} /v1/data@get chain-user`);
      expect((await get('petstore', '/v2/pet/1', userToken)).status).toBe(200);
      count('petstore /v2/pet/{petId}@get chain-user');
    }
    for (let i = 0; i < anonymous; i++) {
      expect((await get('api-a', '/v1/data')).status).toBe(401);
      count('api-a /v1/data@get unknown');
      expect((await get('petstore', '/v2/pet/1')).status).toBe(401);
      count('petstore /v2/pet/{petId}@get unknown');
    }
  }

  it("promtool parses every /metrics; its notes: the clientId label, prom-client's _total gauges", async () => {
    await traffic(2, 1);
    for (const service of SERVICES) {
      const answer = await get(service, '/metrics');
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      const { code, output } = await promtoolCheckMetrics(answer.text);
      // 1 with "error while linting" is a text promtool could not parse; 3 is lint notes only.
      expect({ service, output }).toEqual({
        service,
        output: expect.not.stringContaining('error while linting'),
      });
      const notes = [...new Set(output.split('\n').filter(Boolean))].sort();
      // The notes, derived from the text and then checked for what they may be about.
      const types = new Map(
        [...answer.text.matchAll(/^# TYPE (\w+) (\w+)$/gm)].map(([, name, type]) => [name, type]),
      );
      const familyOf = (sample: string) =>
        types.has(sample) ? sample : sample.replace(/_(bucket|sum|count)$/, '');
      const labelled = new Set(
        [...answer.text.matchAll(/^(\w+)\{(?:.*,)?clientId="/gm)].map(([, m]) => familyOf(m)),
      );
      const gaugesNamedTotal = [...types].filter(([n, t]) => t === 'gauge' && n.endsWith('_total'));
      expect({ service, notes }).toEqual({
        service,
        notes: [
          ...[...labelled].map((m) => `${m} ${CAMEL_CASE}`),
          ...gaugesNamedTotal.map(
            ([m]) => `${m} non-counter metrics should not have "_total" suffix`,
          ),
        ].sort(),
      });
      // clientId is light-4j's label name, kept (the dashboards of its users query it); the
      // gauges are prom-client's process metrics (nodejs_active_handles_total, ...), named so
      // by prom-client.
      const labelNames = new Set(
        [...answer.text.matchAll(/[{,]([A-Za-z_]\w*)="/g)].map(([, name]) => name),
      );
      expect([...labelNames].filter((n) => /[A-Z]/.test(n))).toEqual(['clientId']);
      expect([...labelled]).toEqual(
        expect.arrayContaining(['requests_total', 'success_total', 'response_time_seconds']),
      );
      expect(gaugesNamedTotal.map(([m]) => m).sort()).toEqual([
        'nodejs_active_handles_total',
        'nodejs_active_requests_total',
        'nodejs_active_resources_total',
      ]);
      expect({ service, code }).toEqual({ service, code: 3 });
    }
  });

  it('promtool refuses a text it cannot parse (so the check above can fail)', async () => {
    const broken = '# TYPE requests_total counter\nrequests_total{endpoint="/v1/data@get" 1\n';
    const { code, output } = await promtoolCheckMetrics(broken);
    expect(code).toBe(1);
    expect(output).toMatch(/^error while linting: text format parsing error in line 2/);
  });

  it('a machine without Prometheus fails this suite, naming scripts/test-infra.sh', () => {
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      expect(() => requireProgram('prometheus')).toThrow(
        /^prometheus is not installed: run scripts\/test-infra\.sh/,
      );
    } finally {
      process.env.PATH = saved;
    }
  });

  it('the token server serves no /metrics (nothing to scrape)', async () => {
    const answer = await httpsRequest(`${ts.tokenUrl}/metrics`);
    expect(answer.status).toBe(404);
  });

  it('docs/kubernetes.md: one HTTPS job per service, by its Service name and port', () => {
    const jobs = documentedJobs();
    expect(jobs.map((j) => j.job_name)).toEqual([...SERVICES]);
    for (const job of jobs) {
      const service = job.job_name as Service;
      expect(job).toEqual({
        job_name: service,
        scheme: 'https',
        metrics_path: '/metrics',
        tls_config: { ca_file: expect.stringMatching(/\/ca\.crt$/), server_name: service },
        kubernetes_sd_configs: [{ role: 'endpoints', namespaces: { names: ['chain-local'] } }],
        relabel_configs: [
          {
            source_labels: [
              '__meta_kubernetes_service_name',
              '__meta_kubernetes_endpoint_port_name',
            ],
            regex: `${service};https`,
            action: 'keep',
          },
        ],
      });
      // The port it keeps is the Service's, and the certificate names the Service.
      expect(serviceManifest(service).ports.map((p) => p.name)).toContain('https');
    }
  });

  it('scrapes every service with the documented jobs: up, and exactly the requests made', async () => {
    const local = (job: ScrapeJob, tls: ScrapeJob['tls_config'], name = job.job_name) => ({
      job_name: name,
      scheme: job.scheme,
      metrics_path: job.metrics_path,
      tls_config: tls,
      static_configs: [{ targets: [`127.0.0.1:${port[job.job_name as Service]}`] }],
    });
    const jobs = documentedJobs();
    const a = jobs.find((j) => j.job_name === 'api-a')!;
    prometheus = await startPrometheus({
      global: { scrape_interval: '1s', scrape_timeout: '1s' },
      scrape_configs: [
        // The documented jobs, the CA from certs/ (127.0.0.1 is in the certificate, but the
        // check is against server_name, which the certificate holds too).
        ...jobs.map((job) =>
          local(job, { ...job.tls_config, ca_file: path.join(CERTS, 'ca.crt') }),
        ),
        // The same without the CA, and with a name the certificate does not hold: both down.
        local(a, { server_name: 'api-a' }, 'api-a-without-ca'),
        local(a, { ca_file: path.join(CERTS, 'ca.crt'), server_name: 'api-z' }, 'api-a-other-name'),
      ],
    });
    const ups = {
      ...Object.fromEntries(SERVICES.map((s) => [s, 1])),
      'api-a-without-ca': 0,
      'api-a-other-name': 0,
    };
    const up = await prometheus.waitFor(
      'up',
      (samples) => samples.length === Object.keys(ups).length,
    );
    expect(byLabels(up, ['job'])).toEqual(ups);
    const targets = Object.fromEntries((await prometheus.targets()).map((t) => [t.labels.job, t]));
    for (const s of SERVICES) {
      expect(targets[s]).toMatchObject({
        health: 'up',
        lastError: '',
        scrapeUrl: `https://127.0.0.1:${port[s]}/metrics`,
      });
    }
    expect(targets['api-a-without-ca'].lastError).toMatch(
      /x509: certificate signed by unknown authority/,
    );
    expect(targets['api-a-other-name'].lastError).toMatch(
      /x509: certificate is valid for .*api-a.*, not api-z/,
    );

    // The requests of the first test, then more while it scrapes.
    const scraped = () =>
      prometheus!.waitFor('requests_total', (s) => equal(byLabels(s), expected));
    const equal = (x: object, y: object) => JSON.stringify(sorted(x)) === JSON.stringify(sorted(y));
    const sorted = (x: object) => Object.entries(x).sort(([k], [l]) => k.localeCompare(l));
    expect(byLabels(await scraped())).toEqual(expected);
    await traffic(3, 2);
    expect(byLabels(await scraped())).toEqual(expected);
    expect(expected['api-d /v1/data@get chain-user']).toBe(5);

    // The outcome counters and the histogram's count agree with it.
    const success = byLabels(await prometheus.query('success_total'));
    const authErrors = byLabels(await prometheus.query('auth_error_total'));
    const timed = byLabels(await prometheus.query('response_time_seconds_count'));
    expect(success).toEqual(
      Object.fromEntries(Object.entries(expected).filter(([k]) => k.endsWith('chain-user'))),
    );
    expect(authErrors).toEqual(
      Object.fromEntries(Object.entries(expected).filter(([k]) => k.endsWith('unknown'))),
    );
    expect(timed).toEqual(expected);
    expect(prometheus.log()).not.toMatch(/level=error/);
  });
});
