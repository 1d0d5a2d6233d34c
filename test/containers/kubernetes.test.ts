import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  docker,
  httpsRequest,
  type Answer,
  ClusterSimulation,
  SIM_LABEL,
  type SimPod,
  allProblems,
  configFiles,
  OVERLAYS,
  render,
  scriptSecrets,
  workloads,
  type K8sObject,
  claimsOf,
} from '@chain/testkit';

// The local Kubernetes overlay run as the cluster would run it, simulated on the Docker engine
// of the container test (packages/testkit/src/kubernetes/cluster-simulation.ts says what is and is not simulated): every pod
// a container with exactly the image, environment, mounts, security context, limits and
// probes the rendered manifests give, the Secrets those of scripts/kubernetes-secrets.mjs, on a
// network of this test's own where the Service names resolve to the pods. The test talks to the
// pods as a client inside the cluster would, by their addresses on that network, checking each
// certificate against the Service name.

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const RUN = `${process.pid}`;
const NETWORK = `chain-k8s-sim-${RUN}`;
const CHAIN = ['api-a', 'api-b', 'api-c', 'api-d'];
const NEEDS_OWN_TOKEN = ['api-a', 'api-b', 'api-c'];
const EIGHT = ['D', 'C', 'B', 'A'].flatMap((l) => [`API ${l}: Message 1`, `API ${l}: Message 2`]);

let objects: K8sObject[];
let secrets: K8sObject[];
let tmp: string;
let sim: ClusterSimulation;
const pods: Record<string, SimPod> = {};
let tokenServerUpAt: number;
let token: string;

/** A request to a pod by its address, the certificate checked against the Service name. */
function call(
  pod: SimPod,
  port: number,
  p: string,
  headers: Record<string, string> = {},
  init: { method?: string; body?: string } = {},
): Promise<Answer> {
  return httpsRequest(`https://${pod.ip}:${port}${p}`, {
    headers,
    servername: pod.aliases[0],
    ...init,
  });
}

/** Images of the rendered workloads that this repository builds (the others are pulled). */
async function buildImages(): Promise<void> {
  const images = new Map<string, string>();
  for (const w of workloads(objects)) {
    const image = w.spec.template.spec.containers[0].image;
    const m = /^secured-rest-chain\/([a-z-]+):/.exec(image);
    if (m) images.set(image, m[1]);
  }
  for (const [image, service] of images) {
    const started = Date.now();
    await docker(
      [
        'build',
        '--network',
        'host',
        '-q',
        '-f',
        `services/${service}/Dockerfile`,
        '-t',
        image,
        '.',
      ],
      { timeoutMs: 15 * 60_000 },
    );
    process.stderr.write(`  ${image} built (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  }
}

beforeAll(async () => {
  objects = render(OVERLAYS.local);
  secrets = scriptSecrets();
  const problems = allProblems(objects, secrets);
  if (problems.length > 0) throw new Error(`the local overlay: ${problems.join('; ')}`);
  await buildImages();
  await docker(['network', 'create', '--label', `${SIM_LABEL}=${RUN}`, NETWORK]);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-k8s-sim-'));
  sim = new ClusterSimulation([...objects, ...secrets], NETWORK, tmp, RUN);
  // Everything but the token server: the chain cannot get its own tokens yet.
  pods.influxdb = await sim.createPod('influxdb');
  for (const name of [...CHAIN, 'petstore']) pods[name] = await sim.createPod(name);
}, 20 * 60_000);

afterAll(async () => {
  await sim?.cleanup().catch((err: Error) => process.stderr.write(`cleanup: ${err.message}\n`));
  await docker(['network', 'rm', NETWORK]).catch(() => undefined);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 120_000);

describe('the local overlay on the container engine (a simulation, not a cluster)', () => {
  it('each pod runs its manifest: image, non-root user with fsGroup, read-only root, no capabilities, limits, no published port', async () => {
    for (const pod of Object.values(pods)) {
      const c = pod.container;
      const [info] = JSON.parse(await docker(['inspect', pod.id])) as {
        Config: { Image: string; User: string };
        HostConfig: {
          ReadonlyRootfs: boolean;
          CapDrop: string[] | null;
          SecurityOpt: string[] | null;
          Memory: number;
          NanoCpus: number;
          PortBindings: Record<string, unknown> | null;
          GroupAdd: string[] | null;
        };
      }[];
      expect({
        pod: pod.workload.metadata.name,
        image: info.Config.Image,
        user: info.Config.User,
      }).toEqual({
        pod: pod.workload.metadata.name,
        image: c.image,
        user: '1000:1000',
      });
      expect(info.HostConfig).toMatchObject({
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        GroupAdd: ['1000'],
      });
      expect(info.HostConfig.Memory).toBe(
        Number(c.resources!.limits!.memory.replace('Mi', '')) * 1024 * 1024,
      );
      expect(Object.keys(info.HostConfig.PortBindings ?? {})).toEqual([]);
      // What the process sees: its user, a root it cannot write to.
      const id = await docker(['exec', pod.id, 'id', '-u']);
      expect(id.trim()).toBe('1000');
      await expect(docker(['exec', pod.id, 'touch', '/probe-write'])).rejects.toThrow(
        /Read-only file system/,
      );
    }
  });

  it('/config is the ConfigMap with the Secrets beside it: read-only, mode 0440, group 1000', async () => {
    const pod = pods['api-a'];
    const listing = await docker([
      'exec',
      pod.id,
      'sh',
      '-c',
      'cd /config && find . -type f | sort',
    ]);
    expect(listing.trim().split('\n')).toEqual(
      [
        './api_a.yml',
        './certs/ca.crt',
        './certs/primary.crt',
        './certs/secondary.crt',
        './certs/server.crt',
        './certs/server.key',
        './client.yml',
        './metrics.yml',
        './prometheus.yml',
        './secret.yml',
        './security.yml',
        './server.yml',
      ].sort(),
    );
    expect(
      (await docker(['exec', pod.id, 'stat', '-c', '%a %g', '/config/certs/server.key'])).trim(),
    ).toBe('440 1000');
    await expect(docker(['exec', pod.id, 'touch', '/config/x'])).rejects.toThrow(
      /Read-only file system/,
    );
  });

  it('without the token server every pod is live, api-d and the petstore are ready, api-a ... api-c are not', async () => {
    // Two readiness periods of each of the three, all answered 503 by the service.
    const deadline = Date.now() + 60_000;
    while (
      NEEDS_OWN_TOKEN.some((n) => pods[n].readiness.length < 2) ||
      !pods['api-d'].ready ||
      !pods.petstore.ready
    ) {
      if (Date.now() > deadline) throw new Error('the probes did not run within 60 s');
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const n of NEEDS_OWN_TOKEN) {
      expect({ pod: n, ready: pods[n].ready, started: pods[n].started }).toEqual({
        pod: n,
        ready: false,
        started: true,
      });
      expect(new Set(pods[n].readiness.map((r) => r.status))).toEqual(new Set([503]));
      const ready = await call(pods[n], pods[n].container.ports![0].containerPort, '/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ status: 'DOWN' });
    }
    for (const n of [...CHAIN, 'petstore']) {
      const health = await call(pods[n], pods[n].container.ports![0].containerPort, '/health');
      expect(health.status).toBe(200);
    }
  });

  it('once the token server is up, api-a ... api-c turn ready, after it', async () => {
    pods['token-server'] = await sim.createPod('token-server');
    tokenServerUpAt = pods['token-server'].startedAt;
    await sim.waitReady(pods['token-server']);
    for (const n of NEEDS_OWN_TOKEN) {
      const readyAt = await sim.waitReady(pods[n], 60_000);
      expect(readyAt).toBeGreaterThan(tokenServerUpAt);
      expect(pods[n].readiness.some((r) => r.status === 503 && r.at < tokenServerUpAt)).toBe(true);
    }
  });

  it('InfluxDB runs as its StatefulSet says: non-root, read-only root, its data on the volume claim', async () => {
    await sim.waitReady(pods.influxdb);
    const meta = path.join(tmp, 'claims', 'data-influxdb-0', 'meta', 'meta.db');
    expect(fs.existsSync(meta)).toBe(true);
    expect(fs.statSync(meta).uid).toBe(1000);
  });

  it('api-a answers the 8 messages to a user token from the token server, each hop by its Service name', async () => {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      scope: 'api_a.r read:pets',
    });
    const answer = await call(
      pods['token-server'],
      6882,
      '/oauth2/token',
      {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: 'Basic ' + Buffer.from('chain-user:chain-user-secret').toString('base64'),
      },
      { method: 'POST', body: form.toString() },
    );
    expect(answer.status).toBe(200);
    token = (answer.body as { access_token: string }).access_token;
    const issuer = (
      configFiles(objects, sim.workload('token-server'))['token-server.yml'] as {
        issuer: string;
      }
    ).issuer;
    expect(claimsOf(token)).toMatchObject({ iss: issuer, client_id: 'chain-user' });

    const chain = await call(pods['api-a'], 7441, '/v1/data', { Authorization: `Bearer ${token}` });
    expect(chain.status).toBe(200);
    expect(chain.body).toEqual(EIGHT);
    const refused = await call(pods['api-a'], 7441, '/v1/data');
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'ERR10002' });
    const pet = await call(pods.petstore, 8443, '/v2/pet/1', { Authorization: `Bearer ${token}` });
    expect(pet.status).toBe(200);
    expect(pet.body).toMatchObject({ id: 1, name: 'Rex' });
  });

  it('a deleted api-c pod stops cleanly after its preStop delay, and its replacement rejoins the chain', async () => {
    const old = pods['api-c'];
    // kubectl delete pod: the ReplicaSet makes the replacement at once, while the old pod runs
    // its preStop hook, then gets SIGTERM.
    const [replacement, deleted] = await Promise.all([sim.createPod('api-c'), sim.deletePod(old)]);
    const preStop = Number(old.container.lifecycle!.preStop!.exec!.command[1]) * 1000;
    const shutdownMs = (
      configFiles(objects, old.workload)['server.yml'] as { shutdownTimeoutMs: number }
    ).shutdownTimeoutMs;
    expect(deleted.exitCode).toBe(0);
    expect(deleted.preStopMs).toBeGreaterThanOrEqual(preStop);
    expect(deleted.stopMs).toBeLessThan(shutdownMs);
    const logs = await docker(['logs', old.id]);
    expect(logs).toMatch(/"signal":"SIGTERM"/);

    pods['api-c'] = replacement;
    await sim.waitReady(replacement, 60_000);
    expect(replacement.ip).not.toBe(old.ip);
    const chain = await call(pods['api-a'], 7441, '/v1/data', { Authorization: `Bearer ${token}` });
    expect(chain.status).toBe(200);
    expect(chain.body).toEqual(EIGHT);
  });

  it('no probe failed in a way the kubelet would have answered with a restart', () => {
    for (const pod of sim.pods)
      expect({ pod: pod.name, restarts: pod.restarts }).toEqual({ pod: pod.name, restarts: [] });
  });
});
