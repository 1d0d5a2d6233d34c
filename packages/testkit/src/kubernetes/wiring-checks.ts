import {
  byKind,
  find,
  idOf,
  services,
  workloads,
  type Container,
  type K8sObject,
  type LabelSelector,
  type NetworkPolicyObject,
} from './objects.js';
import {
  configFiles,
  containerEnv,
  containerMounts,
  isEmptySelector,
  podLabels,
  selects,
} from './pods.js';

// The checks that tie the objects to each other and to the services: ports, the URLs of the
// config files, ConfigMap and Secret references, selectors.

/** The number of a container port given by number or name, or undefined. */
const portNumber = (c: Container, port: number | string | undefined) =>
  typeof port === 'number'
    ? c.ports?.find((p) => p.containerPort === port)?.containerPort
    : c.ports?.find((p) => p.name === port)?.containerPort;

/**
 * Ports: server.yml httpsPort (token-server.yml tokenPort and keyPort) are container ports; the
 * probes name a container port; each Service selects a workload, its targetPort is one of that
 * workload's container ports and its port the same number (the config files' URLs carry one
 * number: https://api-b:7442); every https URL in a config file names a Service and its port.
 */
export function portProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const svcs = services(objects);
  for (const w of workloads(objects)) {
    const c = w.spec.template.spec.containers[0];
    const ports = (c.ports ?? []).map((p) => p.containerPort);
    const files = configFiles(objects, w);
    const server = files['server.yml'] as { httpsPort?: number } | undefined;
    const tokenServer = files['token-server.yml'] as
      { tokenPort?: number; keyPort?: number } | undefined;
    const expected: [string, number | undefined][] = [
      ...(server
        ? [['server.yml httpsPort', server.httpsPort] as [string, number | undefined]]
        : []),
      ...(tokenServer
        ? ([
            ['token-server.yml tokenPort', tokenServer.tokenPort],
            ['token-server.yml keyPort', tokenServer.keyPort],
          ] as [string, number | undefined][])
        : []),
    ];
    for (const [what, port] of expected) {
      if (port === undefined || !ports.includes(port)) {
        problems.push(`${idOf(w)}: ${what} ${port} is not a container port (${ports.join(', ')})`);
      }
    }
    for (const kind of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
      const probe = c[kind];
      if (probe?.httpGet && portNumber(c, probe.httpGet.port) === undefined) {
        problems.push(`${idOf(w)}: ${kind} port ${probe.httpGet.port} is not a container port`);
      }
    }
    // Every URL the service calls: a Service of the namespace on its port.
    const env = containerEnv(objects, c);
    const urls: string[] = [];
    // Never called: a client's redirectUri (clients.yml), where a browser goes with its code,
    // and security.yml's dpop.origins, where clients reach this service.
    const collect = (v: unknown) => {
      if (typeof v === 'string' && /^https?:\/\//.test(expand(v, env))) urls.push(expand(v, env));
      else if (v && typeof v === 'object') {
        Object.entries(v).forEach(
          ([key, inner]) => key !== 'redirectUri' && key !== 'origins' && collect(inner),
        );
      }
    };
    Object.entries(files)
      .filter(([name]) => name !== 'token-server.yml') // its issuer is a name, not a call
      .forEach(([, v]) => collect(v));
    for (const u of urls) {
      const url = new URL(u);
      const svc = svcs.find((s) => s.metadata.name === url.hostname);
      const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      if (!svc) problems.push(`${idOf(w)}: ${u}: no Service ${url.hostname}`);
      else if (!svc.spec.ports.some((p) => p.port === port)) {
        problems.push(`${idOf(w)}: ${u}: Service ${url.hostname} has no port ${port}`);
      }
    }
  }
  for (const s of svcs) {
    const selected = workloads(objects).filter(
      (w) => s.spec.selector && selects({ matchLabels: s.spec.selector }, podLabels(w)),
    );
    if (selected.length !== 1) {
      problems.push(
        `${idOf(s)}: selects ${selected.length} workloads (${selected.map((w) => w.metadata.name).join(', ')})`,
      );
      continue;
    }
    const c = selected[0].spec.template.spec.containers[0];
    for (const p of s.spec.ports) {
      const target = portNumber(c, p.targetPort ?? p.port);
      if (target === undefined) {
        problems.push(
          `${idOf(s)} port ${p.port}: targetPort ${p.targetPort} is not a container port of ${selected[0].metadata.name}`,
        );
      } else if (target !== p.port) {
        problems.push(
          `${idOf(s)} port ${p.port}: targetPort ${p.targetPort} is container port ${target} (must be the same number)`,
        );
      }
    }
  }
  return problems;
}

/** `${NAME}` / `${NAME:default}` as the config loader expands them. */
export function expand(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g,
    (_m, name: string, d?: string) => env[name] ?? d ?? '',
  );
}

/** Every ConfigMap and Secret a pod uses exists and has the keys it names. */
export function referenceProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const w of workloads(objects)) {
    for (const c of w.spec.template.spec.containers) {
      containerEnv(objects, c, problems, `${idOf(w)} container ${c.name}`);
      containerMounts(objects, w, c, problems);
    }
  }
  return problems;
}

/**
 * Selectors: each workload's selector selects its own pods; Services, PodDisruptionBudgets and
 * every pod selector of a NetworkPolicy (but `{}`, all pods) select at least one workload's
 * pods; an autoscaler scales a Deployment that exists.
 */
export function selectorProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const ws = workloads(objects);
  const selectsSome = (s: LabelSelector | undefined) => ws.some((w) => selects(s, podLabels(w)));
  for (const w of ws) {
    if (!selects(w.spec.selector, podLabels(w))) {
      problems.push(`${idOf(w)}: its selector does not select its own pods`);
    }
  }
  for (const s of services(objects)) {
    if (!selectsSome({ matchLabels: s.spec.selector })) problems.push(`${idOf(s)}: selects no pod`);
  }
  for (const p of byKind<K8sObject & { spec: { selector: LabelSelector } }>(
    objects,
    'PodDisruptionBudget',
  )) {
    if (!selectsSome(p.spec.selector)) problems.push(`${idOf(p)}: selects no pod`);
  }
  for (const n of byKind<NetworkPolicyObject>(objects, 'NetworkPolicy')) {
    if (!isEmptySelector(n.spec.podSelector) && !selectsSome(n.spec.podSelector)) {
      problems.push(`${idOf(n)}: podSelector selects no pod`);
    }
    (n.spec.ingress ?? []).forEach((rule, i) =>
      (rule.from ?? []).forEach((peer, j) => {
        if (
          peer.podSelector &&
          !isEmptySelector(peer.podSelector) &&
          !selectsSome(peer.podSelector)
        ) {
          problems.push(`${idOf(n)}: ingress[${i}].from[${j}].podSelector selects no pod`);
        }
      }),
    );
  }
  for (const h of byKind<K8sObject & { spec: { scaleTargetRef: { kind: string; name: string } } }>(
    objects,
    'HorizontalPodAutoscaler',
  )) {
    const { kind, name } = h.spec.scaleTargetRef;
    if (!find(objects, kind, name))
      problems.push(`${idOf(h)}: scales ${kind} ${name}, which does not exist`);
  }
  return problems;
}
