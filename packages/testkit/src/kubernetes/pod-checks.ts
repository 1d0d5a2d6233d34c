import { idOf, workloads, type K8sObject } from './objects.js';
import { configFiles } from './pods.js';

/**
 * A rolling update drops no request: each pod with a preStop delay keeps serving for it, then
 * gets SIGTERM and finishes its requests within shutdownTimeoutMs (server.yml, or
 * token-server.yml); terminationGracePeriodSeconds leaves room for both and a second to exit.
 */
export function shutdownProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const w of workloads(objects)) {
    const files = configFiles(objects, w);
    const cfg = (files['server.yml'] ?? files['token-server.yml']) as
      { shutdownTimeoutMs?: number } | undefined;
    if (!cfg) continue;
    const c = w.spec.template.spec.containers[0];
    const command = c.lifecycle?.preStop?.exec?.command ?? [];
    const preStop = command[0] === 'sleep' ? Number(command[1]) : NaN;
    if (!(preStop > 0)) {
      problems.push(`${idOf(w)}: no preStop delay (sleep N) before SIGTERM`);
      continue;
    }
    if (typeof cfg.shutdownTimeoutMs !== 'number') {
      problems.push(`${idOf(w)}: its config does not set shutdownTimeoutMs`);
      continue;
    }
    const needed = preStop + Math.ceil(cfg.shutdownTimeoutMs / 1000) + 1;
    const grace = w.spec.template.spec.terminationGracePeriodSeconds ?? 30;
    if (grace < needed) {
      problems.push(
        `${idOf(w)}: terminationGracePeriodSeconds ${grace} < preStop ${preStop} s + shutdownTimeoutMs ${cfg.shutdownTimeoutMs} ms + 1 s`,
      );
    }
  }
  return problems;
}

/**
 * Pod Security Standards, "restricted" (what the namespaces enforce), and the project's own rules:
 * read-only root file system, requests and limits of CPU and memory on every container.
 */
export function podSecurityProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const w of workloads(objects)) {
    const pod = w.spec.template.spec;
    const id = idOf(w);
    if (pod.hostNetwork || pod.hostPID || pod.hostIPC)
      problems.push(`${id}: uses a host namespace`);
    if ((pod.volumes ?? []).some((v) => 'hostPath' in v)) problems.push(`${id}: mounts a hostPath`);
    for (const c of pod.containers) {
      const sc = c.securityContext ?? {};
      const at = `${id} container ${c.name}`;
      if (!(sc.runAsNonRoot ?? pod.securityContext?.runAsNonRoot))
        problems.push(`${at}: runAsNonRoot is not true`);
      if ((sc.runAsUser ?? pod.securityContext?.runAsUser) === 0)
        problems.push(`${at}: runs as uid 0`);
      if (sc.allowPrivilegeEscalation !== false)
        problems.push(`${at}: allowPrivilegeEscalation is not false`);
      if (sc.privileged) problems.push(`${at}: privileged`);
      if (!(sc.capabilities?.drop ?? []).includes('ALL'))
        problems.push(`${at}: does not drop ALL capabilities`);
      if ((sc.capabilities?.add ?? []).some((cap) => cap !== 'NET_BIND_SERVICE')) {
        problems.push(`${at}: adds capabilities`);
      }
      const seccomp = sc.seccompProfile?.type ?? pod.securityContext?.seccompProfile?.type;
      if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
        problems.push(`${at}: no seccomp profile`);
      if (sc.readOnlyRootFilesystem !== true)
        problems.push(`${at}: the root file system is writable`);
      for (const kind of ['requests', 'limits'] as const) {
        for (const r of ['cpu', 'memory']) {
          if (!c.resources?.[kind]?.[r]) problems.push(`${at}: no ${r} ${kind.slice(0, -1)}`);
        }
      }
    }
  }
  return problems;
}
