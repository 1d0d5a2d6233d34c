import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import path from 'node:path';
import { docker } from '../docker.js';
import {
  idOf,
  services,
  workloads,
  type Container,
  type K8sObject,
  type Probe,
  type Workload,
} from './objects.js';
import { containerEnv, containerMounts, selects, writeVolume } from './pods.js';

// A simulation of what a cluster does with the rendered manifests, on a Docker engine: each pod
// of a Deployment or StatefulSet becomes one container with exactly the pod's image,
// environment (env, envFrom, Secret and ConfigMap references resolved), volumes (ConfigMaps and
// Secrets written to files as the kubelet projects them, with fsGroup's group and the volume's
// mode, mounted read-only where the manifest says; emptyDir as tmpfs; a StatefulSet's claim as
// a folder kept across the pod's replacements), security context (user and group, fsGroup as
// a supplementary group, read-only root file system, dropped capabilities, no new privileges;
// Docker's default seccomp profile is RuntimeDefault), CPU and memory limits, and the network
// aliases of the Services that select it, on a network of the test's own. The probes run as the
// kubelet runs them (HTTP GET from the node to the pod's address, HTTPS without verification,
// periods, time-outs and thresholds of the manifest), and deleting a pod runs its preStop hook,
// then SIGTERM, then SIGKILL at the end of its grace period.
//
// Not simulated (docs/kubernetes.md says so): scheduling and requests, NetworkPolicies, Service
// virtual IPs and endpoint removal (a Docker alias resolves to a pod whether ready or not),
// restarts by the kubelet (a failed liveness or startup probe is recorded, and the test fails
// on it), the API server's admission (Pod Security) and the controllers (the test creates a
// Deployment's replacement pod itself).

export const SIM_LABEL = 'org.secured-rest-chain.k8s-simulation';

export interface ProbeResult {
  at: number;
  ok: boolean;
  /** The HTTP status, or the error. */
  status: number | string;
}

export interface SimPod {
  /** The pod's name: <deployment>-<random> or <statefulset>-<ordinal>. */
  name: string;
  workload: Workload;
  container: Container;
  /** The Docker container. */
  id: string;
  ip: string;
  /** The Service names (and a StatefulSet pod's own name) that resolve to it. */
  aliases: string[];
  /** When the container started (epoch ms). */
  startedAt: number;
  started: boolean;
  ready: boolean;
  terminating: boolean;
  readiness: ProbeResult[];
  /** Probe failures the kubelet would have answered with a restart. */
  restarts: string[];
}

const quantityBytes = (q: string): number => {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(q);
  if (!m) throw new Error(`memory quantity ${q}`);
  const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, k: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ''] ?? 1;
  return Math.round(Number(m[1]) * unit);
};
const quantityCores = (q: string): number =>
  q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);

export class ClusterSimulation {
  readonly pods: SimPod[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  /**
   * @param objects the rendered overlay and the Secrets
   * @param network a Docker network the test created
   * @param dir a folder of the test's own for the volumes (written as root, group fsGroup)
   */
  constructor(
    readonly objects: K8sObject[],
    readonly network: string,
    readonly dir: string,
    readonly runId: string,
  ) {}

  workload(name: string): Workload {
    const w = workloads(this.objects).find((x) => x.metadata.name === name);
    if (!w) throw new Error(`no workload ${name}`);
    return w;
  }

  /** Creates and starts a pod of the workload, and starts probing it as the kubelet does. */
  async createPod(workloadName: string): Promise<SimPod> {
    const w = this.workload(workloadName);
    const spec = w.spec.template.spec;
    if (spec.containers.length !== 1) throw new Error(`${idOf(w)}: one container expected`);
    const c = spec.containers[0];
    const name =
      w.kind === 'StatefulSet'
        ? `${w.metadata.name}-0`
        : `${w.metadata.name}-${crypto.randomBytes(3).toString('hex')}`;
    if (w.kind === 'StatefulSet' && this.pods.some((p) => p.name === name && !p.terminating)) {
      throw new Error(`${name} exists`);
    }

    const problems: string[] = [];
    const env = containerEnv(this.objects, c, problems);
    const mounts = containerMounts(this.objects, w, c, problems);
    if (problems.length > 0) throw new Error(`${name}: ${problems.join('; ')}`);

    const pod = spec.securityContext ?? {};
    const sc = c.securityContext ?? {};
    const uid = sc.runAsUser ?? pod.runAsUser;
    const gid = sc.runAsGroup ?? pod.runAsGroup;
    const fsGroup = pod.fsGroup;
    if ((sc.runAsNonRoot ?? pod.runAsNonRoot) && (uid === undefined || uid === 0)) {
      // The kubelet refuses it (CreateContainerConfigError); here the uid must be explicit.
      throw new Error(`${name}: runAsNonRoot with uid ${uid}`);
    }
    const args = [
      'create',
      '--name',
      `k8s-sim-${this.runId}-${name}`,
      '--label',
      `${SIM_LABEL}=${this.runId}`,
      '--hostname',
      name,
      '--network',
      this.network,
      // Docker's DNS answers the Service names of the network and forwards any other name to
      // this server, where nothing listens: a pod resolves nothing outside the test.
      '--dns',
      '127.0.0.1',
    ];
    const aliases = services(this.objects)
      .filter(
        (s) =>
          s.spec.selector &&
          selects({ matchLabels: s.spec.selector }, w.spec.template.metadata.labels),
      )
      .map((s) => s.metadata.name);
    const sts =
      w.kind === 'StatefulSet' ? (w.spec as { serviceName?: string }).serviceName : undefined;
    if (sts) aliases.push(`${name}.${sts}`);
    for (const a of aliases) args.push('--network-alias', a);
    for (const [k, v] of Object.entries(env)) args.push('--env', `${k}=${v}`);
    if (uid !== undefined) args.push('--user', gid !== undefined ? `${uid}:${gid}` : String(uid));
    if (fsGroup !== undefined) args.push('--group-add', String(fsGroup));
    if (sc.readOnlyRootFilesystem) args.push('--read-only');
    for (const cap of sc.capabilities?.drop ?? []) args.push('--cap-drop', cap);
    for (const cap of sc.capabilities?.add ?? []) args.push('--cap-add', cap);
    if (sc.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
    if (sc.privileged) args.push('--privileged');
    const limits = c.resources?.limits ?? {};
    if (limits.memory) args.push('--memory', String(quantityBytes(limits.memory)));
    if (limits.cpu) args.push('--cpus', String(quantityCores(limits.cpu)));
    args.push('--stop-timeout', String(spec.terminationGracePeriodSeconds ?? 30));

    for (const m of mounts) {
      if (m.volume?.emptyDir) {
        const size = m.volume.emptyDir.sizeLimit
          ? `,size=${quantityBytes(m.volume.emptyDir.sizeLimit)}`
          : '';
        args.push('--tmpfs', `${m.mount.mountPath}:rw,mode=1777${size}`);
        continue;
      }
      let host: string;
      if (m.claim) {
        // The claim of this StatefulSet pod: made once, kept for its replacements; the kubelet
        // gives the volume to fsGroup (group-writable, setgid).
        host = path.join(this.dir, 'claims', `${m.mount.name}-${name}`);
        if (!fs.existsSync(host)) {
          fs.mkdirSync(host, { recursive: true });
          if (fsGroup !== undefined) fs.chownSync(host, 0, fsGroup);
          fs.chmodSync(host, 0o2775);
        }
      } else {
        host = path.join(this.dir, 'pods', name, m.mount.name);
        writeVolume(host, m.files, fsGroup);
      }
      args.push('--volume', `${host}:${m.mount.mountPath}${m.mount.readOnly ? ':ro' : ''}`);
    }

    // command replaces the image's ENTRYPOINT, args its CMD, as in a pod.
    if (c.command) args.push('--entrypoint', c.command[0]);
    args.push(c.image, ...(c.command?.slice(1) ?? []), ...(c.args ?? []));
    const id = (await docker(args)).trim();
    await docker(['start', id]);
    const [info] = JSON.parse(await docker(['inspect', id])) as {
      State: { StartedAt: string };
      NetworkSettings: { Networks: Record<string, { IPAddress: string }> };
    }[];
    const simPod: SimPod = {
      name,
      workload: w,
      container: c,
      id,
      ip: info.NetworkSettings.Networks[this.network].IPAddress,
      aliases,
      startedAt: new Date(info.State.StartedAt).getTime(),
      started: false,
      ready: false,
      terminating: false,
      readiness: [],
      restarts: [],
    };
    this.pods.push(simPod);
    this.probe(simPod);
    return simPod;
  }

  /** One HTTP GET probe from the node, as the kubelet makes it. */
  async probeOnce(pod: SimPod, probe: Probe): Promise<ProbeResult> {
    const get = probe.httpGet;
    if (!get) throw new Error(`${pod.name}: only httpGet probes are simulated`);
    const port =
      typeof get.port === 'number'
        ? get.port
        : pod.container.ports?.find((p) => p.name === get.port)?.containerPort;
    const at = Date.now();
    const secure = (get.scheme ?? 'HTTP') === 'HTTPS';
    return new Promise<ProbeResult>((resolve) => {
      const req = (secure ? https : http).request(
        {
          host: pod.ip,
          port,
          path: get.path,
          method: 'GET',
          headers: { 'User-Agent': 'kube-probe/sim', Accept: '*/*' },
          timeout: (probe.timeoutSeconds ?? 1) * 1000,
          agent: false,
          ...(secure ? { rejectUnauthorized: false } : {}),
        },
        (res) => {
          res.resume();
          const status = res.statusCode ?? 0;
          resolve({ at, ok: status >= 200 && status < 400, status });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (err) => resolve({ at, ok: false, status: err.message }));
      req.end();
    });
  }

  /** Runs `tick` after `seconds`, unless the simulation stopped by then. */
  private later(tick: () => void, seconds: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      tick();
    }, seconds * 1000);
    this.timers.add(t);
  }

  /** One probe every periodSeconds; `onResult` gets each result and the failures in a row. */
  private loop(
    pod: SimPod,
    probe: Probe,
    onResult: (r: ProbeResult, failures: number) => 'stop' | void,
  ): void {
    let failures = 0;
    const tick = async () => {
      if (this.stopped || pod.terminating) return;
      const r = await this.probeOnce(pod, probe);
      failures = r.ok ? 0 : failures + 1;
      if (onResult(r, failures) === 'stop' || this.stopped || pod.terminating) return;
      this.later(() => void tick(), probe.periodSeconds ?? 10);
    };
    this.later(() => void tick(), probe.initialDelaySeconds ?? 0);
  }

  /** The kubelet's probes: startup until it passes, then liveness and readiness. */
  private probe(pod: SimPod): void {
    const c = pod.container;
    const afterStartup = () => {
      pod.started = true;
      if (c.livenessProbe) {
        const threshold = c.livenessProbe.failureThreshold ?? 3;
        this.loop(pod, c.livenessProbe, (r, failures) => {
          if (failures === threshold) pod.restarts.push(`liveness failed: ${r.status}`);
        });
      }
      if (!c.readinessProbe) {
        pod.ready = true;
        return;
      }
      const threshold = c.readinessProbe.failureThreshold ?? 3;
      this.loop(pod, c.readinessProbe, (r, failures) => {
        pod.readiness.push(r);
        if (r.ok) pod.ready = true;
        else if (failures >= threshold) pod.ready = false;
      });
    };
    if (!c.startupProbe) return afterStartup();
    const threshold = c.startupProbe.failureThreshold ?? 3;
    this.loop(pod, c.startupProbe, (r, failures) => {
      if (r.ok) {
        afterStartup();
        return 'stop';
      }
      if (failures >= threshold) {
        pod.restarts.push(`startup failed: ${r.status}`);
        return 'stop';
      }
    });
  }

  /**
   * `kubectl delete pod`: out of the endpoints at once (here: marked), the preStop hook, then
   * SIGTERM, and SIGKILL when the grace period is over. Resolves with the container's exit code
   * and the time each step took.
   */
  async deletePod(pod: SimPod): Promise<{ exitCode: number; preStopMs: number; stopMs: number }> {
    pod.terminating = true;
    pod.ready = false;
    const grace = (pod.workload.spec.template.spec.terminationGracePeriodSeconds ?? 30) * 1000;
    const started = Date.now();
    const preStop = pod.container.lifecycle?.preStop?.exec?.command;
    if (preStop) await docker(['exec', pod.id, ...preStop], { timeoutMs: grace });
    const preStopMs = Date.now() - started;
    const left = Math.max(0, Math.floor((grace - preStopMs) / 1000));
    await docker(['stop', '-t', String(left), pod.id], { timeoutMs: grace + 30_000 });
    const stopMs = Date.now() - started - preStopMs;
    const [info] = JSON.parse(await docker(['inspect', pod.id])) as {
      State: { ExitCode: number };
    }[];
    return { exitCode: info.State.ExitCode, preStopMs, stopMs };
  }

  /** Waits until the pod is ready (its readiness probe passed), at most `timeoutMs`. */
  async waitReady(pod: SimPod, timeoutMs = 90_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (!pod.ready) {
      if (pod.restarts.length > 0) throw new Error(`${pod.name}: ${pod.restarts.join('; ')}`);
      if (Date.now() > deadline) {
        const last = pod.readiness.slice(-3).map((r) => r.status);
        const logs = await docker(['logs', '--tail', '20', pod.id]).catch(() => '');
        throw new Error(
          `${pod.name}: not ready within ${timeoutMs} ms (last: ${last.join(', ')})\n${logs}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return pod.readiness.find((r) => r.ok)?.at ?? Date.now();
  }

  /** Stops the probes and removes every container of this run. */
  async cleanup(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    const ids = (await docker(['ps', '-aq', '--filter', `label=${SIM_LABEL}=${this.runId}`]))
      .split('\n')
      .filter(Boolean);
    if (ids.length > 0) await docker(['rm', '-f', '-v', ...ids]);
  }
}
