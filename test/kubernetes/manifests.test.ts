import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ConfigLoader } from '@chain/config';
import {
  createLogger,
  loadServiceConfig,
  type Logger,
  type ServiceApp,
  type ServiceConfig,
} from '@chain/runtime';
import { loadTokenServerConfig } from '../../services/token-server/src/token-server-config.js';
import {
  allProblems,
  configFiles,
  containerEnv,
  expand,
  containerMounts,
  OUTSIDE,
  parseYaml,
  OVERLAYS,
  podSecurityProblems,
  portProblems,
  reachability,
  referenceProblems,
  render,
  schemaProblems,
  scriptSecrets,
  secretInConfigMapProblems,
  selectorProblems,
  shutdownProblems,
  unknownFieldProblems,
  workloads,
  writeVolume,
  type K8sObject,
  type Workload,
  CERTS,
  ROOT,
} from '@chain/testkit';
import { createApp as apiA } from '../../services/api-a/src/app.js';
import { createApp as apiB } from '../../services/api-b/src/app.js';
import { createApp as apiC } from '../../services/api-c/src/app.js';
import { createApp as apiD } from '../../services/api-d/src/app.js';
import { createApp as petstore } from '../../services/petstore/src/app.js';

// deploy/kubernetes without a cluster: each overlay rendered by kubectl's kustomize, every
// object validated against the Kubernetes API schemas, and the manifests checked against the
// services themselves (their config loaders, their routes). The fixtures under fixtures/ break
// one thing each and must be caught.

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const CHAIN = ['api-a', 'api-b', 'api-c', 'api-d'];
const RUNTIME_SERVICES = [...CHAIN, 'petstore'];
const ALL = [...RUNTIME_SERVICES, 'token-server'];

const secrets = scriptSecrets();
const rendered: Record<string, K8sObject[]> = {};
const overlay = (name: keyof typeof OVERLAYS) => (rendered[name] ??= render(OVERLAYS[name]));

/** Who may connect to whom: the chain's call graph, the entry points, the shared servers. */
const CALLS = {
  'api-a:7441': [OUTSIDE, ...ALL, 'influxdb'].sort(),
  'petstore:8443': [OUTSIDE, ...ALL, 'influxdb'].sort(),
  'api-b:7442': ['api-a'],
  'api-c:7443': ['api-b'],
  'api-d:7444': ['api-c'],
  'token-server:6882': [...ALL, 'influxdb'].sort(),
  'token-server:6886': [...ALL, 'influxdb'].sort(),
  'influxdb:8086': [...RUNTIME_SERVICES].sort(),
};

describe.each(['local', 'production'] as const)('the %s overlay', (name) => {
  it('renders every workload with its Service, PodDisruptionBudget and ConfigMap', () => {
    const objects = overlay(name);
    const kinds = (kind: string) =>
      objects
        .filter((o) => o.kind === kind)
        .map((o) => o.metadata.name.replace(/-[a-z0-9]{10}$/, ''));
    expect(kinds('Deployment').sort()).toEqual([...ALL].sort());
    expect(kinds('StatefulSet')).toEqual(['influxdb']);
    expect(kinds('Service').sort()).toEqual(
      [...RUNTIME_SERVICES, 'influxdb', 'oauth2-key', 'oauth2-token'].sort(),
    );
    expect(kinds('PodDisruptionBudget').sort()).toEqual([...ALL].sort());
    expect(kinds('ConfigMap').sort()).toEqual(
      [...ALL.map((s) => `${s}-config`), 'chain-environment'].sort(),
    );
    expect(kinds('NetworkPolicy')).toHaveLength(8);
    expect(kinds('Namespace')).toEqual([name === 'local' ? 'chain-local' : 'secured-rest-chain']);
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
  });

  it('every object validates against the Kubernetes API schema of its kind', () => {
    expect(schemaProblems(overlay(name))).toEqual([]);
  });

  it('no object has a field the Kubernetes API does not know', () => {
    expect(unknownFieldProblems(overlay(name))).toEqual([]);
  });

  it('is consistent: ports, references, selectors, no secret in a ConfigMap, shutdown, pod security', () => {
    expect(allProblems(overlay(name), secrets)).toEqual([]);
  });

  it('lets api-b be called by api-a only, api-c by api-b, api-d by api-c; api-a and the petstore from outside', () => {
    expect(reachability(overlay(name))).toEqual(CALLS);
  });

  it('uses every Secret the script makes, and no other', () => {
    const used = new Set<string>();
    const objects = [...overlay(name), ...secrets];
    for (const w of workloads(objects)) {
      for (const v of w.spec.template.spec.volumes ?? []) {
        for (const s of v.projected?.sources ?? []) if (s.secret) used.add(s.secret.name);
      }
      for (const c of w.spec.template.spec.containers) {
        for (const e of c.env ?? []) {
          if (e.valueFrom?.secretKeyRef) used.add(e.valueFrom.secretKeyRef.name);
        }
      }
    }
    expect([...used].sort()).toEqual(secrets.map((s) => s.metadata.name).sort());
  });
});

describe('overlay differences', () => {
  it('local: one replica of each workload, the images built here (tag dev)', () => {
    for (const w of workloads(overlay('local'))) {
      expect({ name: w.metadata.name, replicas: w.spec.replicas }).toEqual({
        name: w.metadata.name,
        replicas: 1,
      });
      const image = w.spec.template.spec.containers[0].image;
      expect(image).toBe(
        w.metadata.name === 'influxdb'
          ? 'influxdb:1.8'
          : `secured-rest-chain/${w.metadata.name}:dev`,
      );
    }
  });

  it('production: every Deployment autoscaled on CPU from two pods, with no replica count of its own', () => {
    const objects = overlay('production');
    const hpas = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler') as (K8sObject & {
      spec: {
        scaleTargetRef: { name: string };
        minReplicas: number;
        maxReplicas: number;
        metrics: { resource: { name: string; target: { averageUtilization: number } } }[];
      };
    })[];
    expect(hpas.map((h) => h.spec.scaleTargetRef.name).sort()).toEqual([...ALL].sort());
    for (const h of hpas) {
      expect(h.spec.minReplicas).toBe(2);
      expect(h.spec.maxReplicas).toBeGreaterThan(2);
      expect(h.spec.metrics.map((m) => m.resource.name)).toEqual(['cpu']);
    }
    for (const w of workloads(objects).filter((w) => w.kind === 'Deployment')) {
      expect({ name: w.metadata.name, replicas: w.spec.replicas }).toEqual({
        name: w.metadata.name,
        replicas: undefined,
      });
      expect(w.spec.template.spec.containers[0].image).toBe(
        `registry.example.com/secured-rest-chain/${w.metadata.name}:1.0.0`,
      );
    }
    const influx = workloads(objects).find((w) => w.kind === 'StatefulSet')!;
    expect(influx.spec.volumeClaimTemplates![0].spec.resources.requests.storage).toBe('20Gi');
  });

  it('the same ConfigMaps in both: one image and one config serve every overlay', () => {
    const data = (objects: K8sObject[]) =>
      objects
        .filter((o) => o.kind === 'ConfigMap' && o.metadata.name !== 'chain-environment')
        .map((o) => [o.metadata.name, o.data]);
    const stripHash = (rows: unknown[][]) =>
      rows.map(([n, d]) => [String(n).replace(/-[a-z0-9]{10}$/, ''), d]);
    expect(stripHash(data(overlay('production')))).toEqual(stripHash(data(overlay('local'))));
  });
});

/** A loopback port where nothing listens. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** The workload's /config folder written out as the kubelet would, and its environment. */
function podConfig(
  objects: K8sObject[],
  w: Workload,
): { dir: string; env: Record<string, string> } {
  const all = [...objects, ...secrets];
  const c = w.spec.template.spec.containers[0];
  const problems: string[] = [];
  const env = containerEnv(all, c, problems);
  const config = containerMounts(all, w, c, problems).find((m) => m.mount.mountPath === '/config')!;
  expect(problems).toEqual([]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `k8s-config-${w.metadata.name}-`));
  writeVolume(dir, config.files);
  // The image's own environment (services/*/Dockerfile) under the pod's.
  return { dir, env: { NODE_ENV: 'production', CONFIG_DIR: '/config', ...env } };
}

type CreateApp = (config: ServiceConfig, logger: Logger) => ServiceApp;
const APPS: Record<string, CreateApp> = {
  'api-a': apiA,
  'api-b': apiB,
  'api-c': apiC,
  'api-d': apiD,
  petstore,
};
const createApp = (service: string): CreateApp => APPS[service];

describe('what each pod mounts, read by the service itself', () => {
  const objects = render(OVERLAYS.local);
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  /**
   * Loads the pod's /config as the service does at start (its config, then its app, which reads
   * its own files such as api_a.yml); returns the loader's warnings (light-4j keys that do
   * nothing here) and the files of /config that nothing read.
   */
  function load(
    w: Workload,
    envOverride: Record<string, string> = {},
  ): { warnings: string[]; unread: string[]; config?: ServiceConfig } {
    const pod = podConfig(objects, w);
    const { dir } = pod;
    const env = { ...pod.env, ...envOverride };
    dirs.push(dir);
    const bundledDir = path.join(ROOT, 'services', w.metadata.name, 'config');
    let loader: ConfigLoader;
    let config: ServiceConfig | undefined;
    if (w.metadata.name === 'token-server') {
      loader = new ConfigLoader({ bundledDir, overrideDir: dir, env });
      loadTokenServerConfig(loader);
    } else {
      config = loadServiceConfig({ bundledDir, overrideDir: dir, env });
      createApp(w.metadata.name)(config, createLogger(w.metadata.name, 'silent'));
      loader = config.loader;
    }
    return {
      warnings: loader.warnings.map((x) => JSON.stringify(x)),
      unread: loader.unreadFiles().map((f) => path.basename(f)),
      config,
    };
  }

  it.each(ALL)(
    '%s: every key of every mounted file is one the service knows, and every file is read',
    (service) => {
      const w = workloads(objects).find((x) => x.metadata.name === service)!;
      expect(load(w)).toMatchObject({ warnings: [], unread: [] });
    },
  );

  it.each(RUNTIME_SERVICES)('%s: the probe paths are served without a token', async (service) => {
    const w = workloads(objects).find((x) => x.metadata.name === service)!;
    // No token server here: its URL is a loopback port where nothing listens (the Service name
    // would go to the machine's resolver).
    const closed = await closedPort();
    const { config } = load(w, {
      OAUTH_TOKEN_URL: `https://127.0.0.1:${closed}`,
      OAUTH_KEY_URL: `https://127.0.0.1:${closed}`,
    });
    expect(config!.security.enableVerifyJwt).toBe(true);
    const { listener: app } = createApp(service)(config!, createLogger(service, 'silent'));
    const c = w.spec.template.spec.containers[0];
    const paths = [c.startupProbe, c.livenessProbe, c.readinessProbe].map((p) => p!.httpGet!.path);
    expect(paths).toEqual(['/health', '/health', '/ready']);
    const health = await request(app).get('/health');
    expect({ status: health.status, body: health.body }).toEqual({
      status: 200,
      body: { status: 'UP', serviceId: config!.server.serviceId },
    });
    // api-a ... api-c need their own token, which no token server gives here; api-d and the
    // petstore need none. Answered by the service either way, without a token.
    const ready = await request(app).get('/ready');
    expect(ready.headers['content-type']).toBe('application/json; charset=utf-8');
    if (service === 'api-d' || service === 'petstore') {
      expect({ status: ready.status, body: ready.body }).toEqual({
        status: 200,
        body: { status: 'UP', serviceId: config!.server.serviceId },
      });
    } else {
      expect({ status: ready.status, body: ready.body }).toEqual({
        status: 503,
        body: {
          status: 'DOWN',
          serviceId: config!.server.serviceId,
          checks: [
            {
              name: 'token',
              status: 'DOWN',
              reason: 'ERR10009 CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
            },
          ],
        },
      });
    }
  });

  it.each(RUNTIME_SERVICES)(
    "%s: a DPoP proof names only the service's own origins: its Service, a port forward",
    (service) => {
      const w = workloads(objects).find((x) => x.metadata.name === service)!;
      const { config } = load(w);
      const port = w.spec.template.spec.containers[0].ports![0].containerPort;
      expect(config!.security.dpop.origins).toEqual([
        `https://${service}:${port}`,
        `https://localhost:${port}`,
      ]);
    },
  );

  it('the config files in the pods name each downstream, token and key server by its Service', () => {
    const files = configFiles(
      [...objects, ...secrets],
      workloads(objects).find((w) => w.metadata.name === 'api-a')!,
    );
    expect(files['api_a.yml']).toEqual({
      api_b_host: 'https://api-b:7442',
      api_b_path: '/v1/data',
    });
  });
});

describe('the config folders of Kubernetes and Compose', () => {
  const objects = render(OVERLAYS.local);

  it.each(ALL)('%s: every file of base/config is in its ConfigMap', (service) => {
    const dir = path.join(ROOT, 'deploy', 'kubernetes', 'base', 'config', service);
    const cm = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith(`${service}-config-`),
    )!;
    expect(Object.keys(cm.data as object).sort()).toEqual(fs.readdirSync(dir).sort());
  });

  /**
   * What the two may differ in, on purpose: Kubernetes sets shutdownTimeoutMs (its grace period
   * is sized from it), mounts no client key store (loadKeyStore is false in both), and the token
   * server's signing key has a file name of its own (the Secret jwt-signing-key).
   */
  const DIFFERENCES: Record<string, string[]> = {
    'server.yml': ['shutdownTimeoutMs'],
    'client.yml': ['tls.keyStore'],
    'token-server.yml': ['signing.keyFile'],
  };
  const flat = (v: unknown, at: string[] = []): [string, unknown][] =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.entries(v).flatMap(([k, x]) => flat(x, [...at, k]))
      : [[at.join('.'), v]];

  it.each(ALL)(
    '%s: the same settings as its Compose folder, once the pod environment is expanded',
    (service) => {
      const w = workloads(objects).find((x) => x.metadata.name === service)!;
      const env = containerEnv([...objects, ...secrets], w.spec.template.spec.containers[0]);
      const k8s = configFiles([...objects, ...secrets], w);
      for (const [file, value] of Object.entries(k8s)) {
        if (['secret.yml', 'clients.yml'].includes(file)) continue;
        const composeFile = path.join(ROOT, 'config', service, 'config', file);
        const compose = parseYaml(fs.readFileSync(composeFile, 'utf8')) as unknown;
        const skip = DIFFERENCES[file] ?? [];
        const settings = (v: unknown) =>
          Object.fromEntries(
            flat(v)
              .filter(([k]) => !skip.includes(k))
              .map(([k, x]) => [k, typeof x === 'string' ? expand(x, env) : x]),
          );
        expect({ file, settings: settings(value) }).toEqual({
          file,
          settings: settings(compose),
        });
      }
    },
  );
});

describe('the production overlay with components/redis (fixtures/with-redis)', () => {
  const objects = render(path.join(FIXTURES, 'with-redis'));

  it('adds Redis, a Service and a policy that lets in the five services only', () => {
    const named = (kind: string) =>
      objects.filter((o) => o.kind === kind && o.metadata.name === 'redis');
    expect(named('Deployment')).toHaveLength(1);
    expect(named('Service')).toHaveLength(1);
    expect(named('Deployment')[0].metadata.namespace).toBe('secured-rest-chain');
    expect(reachability(objects)['redis:6379']).toEqual([...RUNTIME_SERVICES].sort());
    expect(reachability(objects)['api-b:7442']).toEqual(['api-a']);
  });

  it('passes every check of the overlays: schema, known fields, wiring, pod security', () => {
    expect(schemaProblems(objects)).toEqual([]);
    expect(unknownFieldProblems(objects)).toEqual([]);
    expect(allProblems(objects, secrets)).toEqual([]);
  });
});

describe('the checks catch a broken manifest (fixtures under test/kubernetes/fixtures)', () => {
  const fixture = (name: string) => render(path.join(FIXTURES, name));

  it('port-mismatch: api-b listens on 7442 (server.yml) but the Deployment says 7450', () => {
    expect(portProblems([...fixture('port-mismatch'), ...secrets])).toEqual([
      'Deployment api-b: server.yml httpsPort 7442 is not a container port (7450)',
      'Service api-b port 7442: targetPort https is container port 7450 (must be the same number)',
    ]);
  });

  it('missing-secret: api-c mounts a TLS Secret that nobody makes', () => {
    const objects = fixture('missing-secret');
    expect(referenceProblems([...objects, ...secrets])).toEqual([
      'Deployment api-c volume config: Secret api-c-certs does not exist',
    ]);
    expect(allProblems(objects, secrets)).toContain(
      'Deployment api-c volume config: Secret api-c-certs does not exist',
    );
  });

  it('wrong-selector: the policy for api-c lets in pods labelled api-bb, so api-b is shut out', () => {
    const objects = fixture('wrong-selector');
    expect(selectorProblems([...objects, ...secrets])).toEqual([
      'NetworkPolicy api-c-from-api-b: ingress[0].from[0].podSelector selects no pod',
    ]);
    expect(reachability(objects)['api-c:7443']).toEqual([]);
  });

  it('a ConfigMap holding a client secret and a private key (made here: never committed)', () => {
    const objects = structuredClone(overlay('local'));
    const cm = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('api-a-config'),
    )!;
    const data = cm.data as Record<string, string>;
    data['secret.yml'] = 'clientCredentialsClientSecret: api-a-secret\n';
    data['server.key'] = fs.readFileSync(path.join(CERTS, 'server.key'), 'utf8');
    const problems = secretInConfigMapProblems(objects, secrets);
    const at = `ConfigMap ${cm.metadata.name}`;
    expect(problems).toEqual(
      expect.arrayContaining([
        `${at} secret.yml: clientCredentialsClientSecret holds a literal secret`,
        `${at} secret.yml: holds the value of Secret api-a-secret secret.yml`,
        `${at} server.key: holds a PEM private key`,
        `${at} server.key: holds the value of Secret api-a-tls tls.key`,
      ]),
    );
    expect(
      problems.filter(
        (p) => !p.startsWith(`${at} secret.yml:`) && !p.startsWith(`${at} server.key:`),
      ),
    ).toEqual([]);
    expect(secretInConfigMapProblems(overlay('local'), secrets)).toEqual([]);
  });

  it('unsafe-pod: a writable root, privilege escalation, no limits, a short grace period', () => {
    const objects = [...fixture('unsafe-pod'), ...secrets];
    expect(podSecurityProblems(objects)).toEqual([
      'Deployment api-d container api-d: allowPrivilegeEscalation is not false',
      'Deployment api-d container api-d: the root file system is writable',
      'Deployment api-d container api-d: no cpu limit',
      'Deployment api-d container api-d: no memory limit',
    ]);
    expect(shutdownProblems(objects)).toEqual([
      'Deployment api-d: terminationGracePeriodSeconds 8 < preStop 5 s + shutdownTimeoutMs 10000 ms + 1 s',
    ]);
  });

  it('unknown-field: a misspelt readinessProbe and a string replica count', () => {
    const objects = fixture('unknown-field');
    expect(schemaProblems(objects)).toEqual([
      'Deployment petstore: data/spec/replicas must be integer',
    ]);
    expect(unknownFieldProblems(objects)).toEqual([
      expect.stringMatching(
        /^Deployment petstore: Type 'string' is not assignable to type 'number'/,
      ),
      expect.stringMatching(
        /^Deployment petstore: Object literal may only specify known properties, and '"readinesProbe"' does not exist in type 'IContainer'/,
      ),
    ]);
  });

  it('unknown-config-key: a misspelt key in a mounted file stops the service with the file and key', () => {
    const objects = fixture('unknown-config-key');
    const w = workloads(objects).find((x) => x.metadata.name === 'api-a')!;
    const { dir, env } = podConfig(objects, w);
    try {
      expect(() =>
        loadServiceConfig({
          bundledDir: path.join(ROOT, 'services', 'api-a', 'config'),
          overrideDir: dir,
          env,
        }),
      ).toThrow(`Config error in ${dir}/server.yml at key "shutdownTimeoutMS"`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('scripts/kubernetes-secrets.mjs', () => {
  it('makes the TLS Secrets in the layout of kubernetes.io/tls (as cert-manager writes them)', () => {
    const tls = secrets.filter((s) => s.metadata.name.endsWith('-tls'));
    expect(tls.map((s) => s.metadata.name).sort()).toEqual(ALL.map((s) => `${s}-tls`).sort());
    for (const s of tls) {
      expect(s.type).toBe('kubernetes.io/tls');
      expect(Object.keys(s.data as object).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    }
  });

  it('gives each service the secret of the client its client.yml names, from the clients file', () => {
    const clients = path.join(os.tmpdir(), `k8s-clients-${process.pid}.yml`);
    fs.writeFileSync(
      clients,
      `clients:\n${['api-a', 'api-b', 'api-c', 'api-d', 'petstore']
        .map((s) => `  ${s}-client:\n    secret: own-${s}-secret\n    scope: []\n`)
        .join('')}`,
    );
    try {
      const own = scriptSecrets(['--clients', clients, '--namespace', 'ns1']);
      const apiB = own.find((s) => s.metadata.name === 'api-b-secret')!;
      expect(apiB.metadata.namespace).toBe('ns1');
      const yml = Buffer.from(
        (apiB.data as Record<string, string>)['secret.yml'],
        'base64',
      ).toString();
      expect(yml).toContain(
        'clientCredentialsClientSecret: own-api-b-secret\nkeyClientSecret: own-api-b-secret\n',
      );
    } finally {
      fs.rmSync(clients);
    }
  });

  it('refuses a clients file without a service client, naming the client', () => {
    const clients = path.join(os.tmpdir(), `k8s-clients-${process.pid}-short.yml`);
    fs.writeFileSync(clients, 'clients:\n  api-a-client:\n    secret: x\n');
    try {
      expect(() =>
        execFileSync(
          process.execPath,
          [path.join(ROOT, 'scripts', 'kubernetes-secrets.mjs'), '--clients', clients],
          {
            stdio: ['ignore', 'pipe', 'pipe'],
            encoding: 'utf8',
          },
        ),
      ).toThrow(
        /no secret for client api-b-client \(api-b client\.yml oauth\.token\.client_credentials\.client_id\)/,
      );
    } finally {
      fs.rmSync(clients);
    }
  });

  it('no private key, certificate or secret is committed under deploy/', () => {
    const files = execFileSync(
      'git',
      ['ls-files', '--cached', '--others', '--exclude-standard', 'deploy', 'test/kubernetes'],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    )
      .split('\n')
      .filter(Boolean);
    expect(files.length).toBeGreaterThan(10);
    const leaks = files.filter(
      (f) =>
        /-----BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)-----/.test(
          fs.readFileSync(path.join(ROOT, f), 'utf8'),
        ) ||
        /\.(key|crt|pem|p12)$/.test(f) ||
        /(^|\/)secret\.yml$/.test(f),
    );
    expect(leaks).toEqual([]);
  });
});
