import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from './service-process';

// The Kubernetes manifests as data: rendered by kubectl's kustomize, validated against the
// Kubernetes API schemas offline (kubernetes-models, plus unknown fields through its TypeScript
// types), and the checks that tie them to the services: ports, probes, Secrets, selectors,
// network policies, shutdown timing, pod security. Each check returns its problems as
// sentences (an empty list when all is well), so a test asserts both the real overlays (none)
// and deliberately broken fixtures (exactly the expected ones). The container test uses the
// same functions to turn the local overlay into containers.

const { parse, parseAllDocuments } = createRequire(
  path.join(ROOT, 'packages', 'config', 'package.json'),
)('yaml') as typeof import('yaml');

export const KUBERNETES_DIR = path.join(ROOT, 'deploy', 'kubernetes');
export const OVERLAYS = {
  local: path.join(KUBERNETES_DIR, 'overlays', 'local'),
  production: path.join(KUBERNETES_DIR, 'overlays', 'production'),
};

export interface Metadata {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: Metadata;
  [field: string]: unknown;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface HttpGet {
  path: string;
  port: number | string;
  scheme?: string;
}
export interface Probe {
  httpGet?: HttpGet;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
  initialDelaySeconds?: number;
}
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
  };
}
export interface Container {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: SecurityContext;
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  fsGroup?: number;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  privileged?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type: string };
}
export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}
export interface ProjectionSource {
  configMap?: { name: string; items?: KeyToPath[]; optional?: boolean };
  secret?: { name: string; items?: KeyToPath[]; optional?: boolean };
}
export interface Volume {
  name: string;
  projected?: { defaultMode?: number; sources: ProjectionSource[] };
  configMap?: { name: string; items?: KeyToPath[]; defaultMode?: number };
  secret?: { secretName: string; items?: KeyToPath[]; defaultMode?: number };
  emptyDir?: { sizeLimit?: string };
  persistentVolumeClaim?: { claimName: string };
}
export interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  securityContext?: SecurityContext;
  terminationGracePeriodSeconds?: number;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  automountServiceAccountToken?: boolean;
  enableServiceLinks?: boolean;
}
export interface Workload extends K8sObject {
  spec: {
    replicas?: number;
    selector: LabelSelector;
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
    volumeClaimTemplates?: {
      metadata: { name: string };
      spec: { resources: { requests: { storage: string } } };
    }[];
  };
}
export interface ServiceObject extends K8sObject {
  spec: {
    selector?: Record<string, string>;
    clusterIP?: string;
    ports: { name?: string; port: number; targetPort?: number | string; protocol?: string }[];
  };
}
interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface NetworkPolicyObject extends K8sObject {
  spec: {
    podSelector: LabelSelector;
    policyTypes?: string[];
    ingress?: {
      from?: NetworkPolicyPeer[];
      ports?: { port?: number | string; protocol?: string }[];
    }[];
  };
}
interface DataObject extends K8sObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  stringData?: Record<string, string>;
  type?: string;
}

/** Runs kubectl; throws with its stderr. */
export function kubectl(args: string[]): string {
  try {
    return execFileSync('kubectl', args, {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')}: ${(e.stderr || e.message).trim()}`);
  }
}

/** One YAML document (the `yaml` package of @chain/config). */
export const parseYaml = (text: string): unknown => parse(text);

/** Parses a stream of YAML documents into objects (empty documents dropped). */
export function parseObjects(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`YAML: ${doc.errors[0].message}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null && typeof o === 'object');
}

/** `kubectl kustomize <dir>`: the objects an overlay gives. */
export function render(dir: string): K8sObject[] {
  return parseObjects(kubectl(['kustomize', dir]));
}

/** The Secrets scripts/kubernetes-secrets.mjs makes (from the development certificates). */
export function scriptSecrets(args: string[] = []): K8sObject[] {
  const text = execFileSync(
    process.execPath,
    [path.join(ROOT, 'scripts', 'kubernetes-secrets.mjs'), ...args],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return parseObjects(text);
}

export const idOf = (o: K8sObject) => `${o.kind} ${o.metadata?.name}`;
const byKind = <T extends K8sObject>(objects: K8sObject[], ...kinds: string[]) =>
  objects.filter((o) => kinds.includes(o.kind)) as T[];
export const workloads = (objects: K8sObject[]) =>
  byKind<Workload>(objects, 'Deployment', 'StatefulSet');
export const services = (objects: K8sObject[]) => byKind<ServiceObject>(objects, 'Service');
const find = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name) as DataObject | undefined;

// ---------------------------------------------------------------------------------------------
// The API schemas.

/** kubernetes-models' class and TypeScript type for each kind the manifests use. */
const MODELS: Record<string, { module: string; kind: string }> = {
  'v1/Namespace': { module: 'kubernetes-models/v1/Namespace', kind: 'Namespace' },
  'v1/ConfigMap': { module: 'kubernetes-models/v1/ConfigMap', kind: 'ConfigMap' },
  'v1/Secret': { module: 'kubernetes-models/v1/Secret', kind: 'Secret' },
  'v1/Service': { module: 'kubernetes-models/v1/Service', kind: 'Service' },
  'apps/v1/Deployment': { module: 'kubernetes-models/apps/v1/Deployment', kind: 'Deployment' },
  'apps/v1/StatefulSet': { module: 'kubernetes-models/apps/v1/StatefulSet', kind: 'StatefulSet' },
  'policy/v1/PodDisruptionBudget': {
    module: 'kubernetes-models/policy/v1/PodDisruptionBudget',
    kind: 'PodDisruptionBudget',
  },
  'networking.k8s.io/v1/NetworkPolicy': {
    module: 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy',
    kind: 'NetworkPolicy',
  },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
    kind: 'HorizontalPodAutoscaler',
  },
};

/**
 * Every object against the OpenAPI schema of its kind (kubernetes-models: types, formats such
 * as quantities, required fields, enums). A kind without a schema here is a problem too.
 */
export function schemaProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const o of objects) {
    const model = MODELS[`${o.apiVersion}/${o.kind}`];
    if (!model) {
      problems.push(`${idOf(o)}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    const Model = (require(model.module) as Record<string, new (data: unknown) => Validatable>)[
      model.kind
    ];
    try {
      new Model(o).validate();
    } catch (err) {
      problems.push(`${idOf(o)}: ${(err as Error).message}`);
    }
  }
  return problems;
}
interface Validatable {
  validate(): void;
}

/**
 * Fields the API does not know. The schemas of kubernetes-models allow unknown fields (a
 * misspelt `readinesProbe` passes them and would be dropped, or refused, by the API server), so
 * every object is also type-checked by TypeScript against the models' types as an object
 * literal, where a field the type does not declare is an error at any depth.
 */
export function unknownFieldProblems(objects: K8sObject[]): string[] {
  const file = path.join(ROOT, 'test', 'kubernetes', '__objects__.ts');
  const entries: { object: K8sObject; text: string }[] = [];
  const imports = new Map<string, string>();
  objects.forEach((o, i) => {
    const model = MODELS[`${o.apiVersion}/${o.kind}`];
    if (!model) return;
    const type = `I${model.kind}`;
    imports.set(model.module, type);
    entries.push({
      object: o,
      text: `export const o${i}: ${type} = ${JSON.stringify(o, null, 1)};`,
    });
  });
  const header = [...imports].map(([m, t]) => `import type { ${t} } from '${m}';`);
  // The lines of each object in the source, to name the object of each diagnostic.
  let line = header.length;
  const spans = entries.map(({ object, text }) => {
    const from = line;
    line += text.split('\n').length;
    return { from, to: line, object };
  });
  const source = [...header, ...entries.map((e) => e.text)].join('\n');

  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    target: ts.ScriptTarget.ES2022,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === file
      ? ts.createSourceFile(name, source, version)
      : getSourceFile(name, version, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const diagnostics = [
    ...program.getSyntacticDiagnostics(program.getSourceFile(file)),
    ...program.getSemanticDiagnostics(program.getSourceFile(file)),
  ];
  return diagnostics.map((d) => {
    const at =
      d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    const object = at ? spans.find((s) => at.line >= s.from && at.line < s.to)?.object : undefined;
    const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    return `${object ? idOf(object) : 'objects'}: ${text}`;
  });
}

// ---------------------------------------------------------------------------------------------
// Pods: labels, the files of their volumes, their environment.

/** True when the selector selects these labels (an empty selector selects every pod). */
export function selects(selector: LabelSelector | undefined, labels: Record<string, string>) {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[k] !== v) return false;
  }
  for (const e of selector.matchExpressions ?? []) {
    const has = e.key in labels;
    const value = labels[e.key];
    const ok =
      e.operator === 'In'
        ? has && (e.values ?? []).includes(value)
        : e.operator === 'NotIn'
          ? !has || !(e.values ?? []).includes(value)
          : e.operator === 'Exists'
            ? has
            : e.operator === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

const podLabels = (w: Workload) => w.spec.template.metadata.labels ?? {};
const isEmptySelector = (s: LabelSelector | undefined) =>
  !!s && Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;

const decode = (o: DataObject, key: string): Buffer | undefined => {
  if (o.data?.[key] !== undefined) {
    return o.kind === 'Secret' ? Buffer.from(o.data[key], 'base64') : Buffer.from(o.data[key]);
  }
  if (o.binaryData?.[key] !== undefined) return Buffer.from(o.binaryData[key], 'base64');
  if (o.stringData?.[key] !== undefined) return Buffer.from(o.stringData[key]);
  return undefined;
};
const keysOf = (o: DataObject) => [
  ...Object.keys(o.data ?? {}),
  ...Object.keys(o.binaryData ?? {}),
  ...Object.keys(o.stringData ?? {}),
];

export interface VolumeFile {
  /** Path inside the volume, e.g. `certs/server.key`. */
  path: string;
  content: Buffer;
  mode: number;
}

/**
 * The files a configMap, secret or projected volume shows the container, as the kubelet writes
 * them: keys (or the items' paths) with the volume's mode. `problems` gets every reference to a
 * missing ConfigMap, Secret or key.
 */
export function volumeFiles(
  objects: K8sObject[],
  volume: Volume,
  problems: string[] = [],
  owner = `volume ${volume.name}`,
): VolumeFile[] {
  const files: VolumeFile[] = [];
  const add = (
    kind: 'ConfigMap' | 'Secret',
    name: string,
    items: KeyToPath[] | undefined,
    mode: number,
    optional = false,
  ) => {
    const source = find(objects, kind, name);
    if (!source) {
      if (!optional) problems.push(`${owner}: ${kind} ${name} does not exist`);
      return;
    }
    const wanted: KeyToPath[] = items ?? keysOf(source).map((key) => ({ key, path: key }));
    for (const item of wanted) {
      const content = decode(source, item.key);
      if (content === undefined) {
        problems.push(`${owner}: ${kind} ${name} has no key ${item.key}`);
        continue;
      }
      files.push({ path: item.path, content, mode: item.mode ?? mode });
    }
  };
  if (volume.projected) {
    const mode = volume.projected.defaultMode ?? 0o644;
    for (const s of volume.projected.sources) {
      if (s.configMap)
        add('ConfigMap', s.configMap.name, s.configMap.items, mode, s.configMap.optional);
      if (s.secret) add('Secret', s.secret.name, s.secret.items, mode, s.secret.optional);
    }
  } else if (volume.configMap) {
    add(
      'ConfigMap',
      volume.configMap.name,
      volume.configMap.items,
      volume.configMap.defaultMode ?? 0o644,
    );
  } else if (volume.secret) {
    add(
      'Secret',
      volume.secret.secretName,
      volume.secret.items,
      volume.secret.defaultMode ?? 0o644,
    );
  }
  return files;
}

/** The container's environment as the kubelet sets it: envFrom first, then env. */
export function containerEnv(
  objects: K8sObject[],
  container: Container,
  problems: string[] = [],
  owner = `container ${container.name}`,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    if (!ref) continue;
    const source = find(objects, kind, ref.name);
    if (!source) {
      problems.push(`${owner}: envFrom ${kind} ${ref.name} does not exist`);
      continue;
    }
    for (const key of keysOf(source)) env[key] = decode(source, key)!.toString();
  }
  for (const v of container.env ?? []) {
    if (v.value !== undefined) {
      env[v.name] = v.value;
      continue;
    }
    const ref = v.valueFrom?.secretKeyRef ?? v.valueFrom?.configMapKeyRef;
    const kind = v.valueFrom?.secretKeyRef ? 'Secret' : 'ConfigMap';
    if (!ref) continue;
    const source = find(objects, kind, ref.name);
    const value = source ? decode(source, ref.key) : undefined;
    if (value === undefined) {
      if (!ref.optional) {
        problems.push(
          `${owner}: env ${v.name}: ${kind} ${ref.name}${source ? ` has no key ${ref.key}` : ' does not exist'}`,
        );
      }
      continue;
    }
    env[v.name] = value.toString();
  }
  return env;
}

/** Where the container mounts each volume, with the volume's files. */
export function containerMounts(
  objects: K8sObject[],
  w: Workload,
  c: Container,
  problems: string[] = [],
) {
  const volumes = w.spec.template.spec.volumes ?? [];
  const claims = (w.spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name);
  return (c.volumeMounts ?? []).map((m) => {
    const volume = volumes.find((v) => v.name === m.name);
    if (!volume && !claims.includes(m.name)) {
      problems.push(`${idOf(w)}: volumeMount ${m.name} names no volume`);
    }
    return {
      mount: m,
      volume,
      /** A volume claim of a StatefulSet: a volume of its own per pod. */
      claim: claims.includes(m.name),
      files: volume
        ? volumeFiles(objects, volume, problems, `${idOf(w)} volume ${volume.name}`)
        : [],
    };
  });
}

/** The config files a workload reads from /config (its CONFIG_DIR), parsed, by file name. */
export function configFiles(objects: K8sObject[], w: Workload): Record<string, unknown> {
  const c = w.spec.template.spec.containers[0];
  const config = containerMounts(objects, w, c).find((m) => m.mount.mountPath === '/config');
  const out: Record<string, unknown> = {};
  for (const f of config?.files ?? []) {
    if (/^[^/]+\.ya?ml$/.test(f.path)) out[f.path] = parse(f.content.toString());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The checks.

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
    // A client's redirectUri (clients.yml) is where a browser goes with its code: never called.
    const collect = (v: unknown) => {
      if (typeof v === 'string' && /^https?:\/\//.test(expand(v, env))) urls.push(expand(v, env));
      else if (v && typeof v === 'object') {
        Object.entries(v).forEach(([key, inner]) => key !== 'redirectUri' && collect(inner));
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

export const OUTSIDE = 'outside';

/**
 * Who may open a connection to each workload's container ports under the NetworkPolicies, as a
 * network plugin enforcing them decides (ingress only): a pod selected by no Ingress policy
 * takes every connection; otherwise a peer gets in when a rule of a policy selecting the pod
 * lets it in on that port. Sources are the workloads of the namespace and `outside` (any
 * address outside the namespace). Result: `workload:port` -> sorted sources.
 */
export function reachability(objects: K8sObject[]): Record<string, string[]> {
  const ws = workloads(objects);
  const policies = byKind<NetworkPolicyObject>(objects, 'NetworkPolicy').filter((n) =>
    (n.spec.policyTypes ?? ['Ingress']).includes('Ingress'),
  );
  const out: Record<string, string[]> = {};
  for (const target of ws) {
    const c = target.spec.template.spec.containers[0];
    const applying = policies.filter((n) => selects(n.spec.podSelector, podLabels(target)));
    for (const port of c.ports ?? []) {
      const sources = [OUTSIDE, ...ws.map((w) => w.metadata.name)].filter((source) => {
        if (applying.length === 0) return true;
        const labels =
          source === OUTSIDE ? undefined : podLabels(ws.find((w) => w.metadata.name === source)!);
        return applying.some((n) =>
          (n.spec.ingress ?? []).some((rule) => {
            const portOk =
              !rule.ports ||
              rule.ports.some(
                (p) =>
                  p.port === undefined || p.port === port.containerPort || p.port === port.name,
              );
            const peerOk =
              !rule.from ||
              rule.from.length === 0 ||
              rule.from.some((peer) =>
                labels === undefined
                  ? !!peer.ipBlock ||
                    (!!peer.namespaceSelector && isEmptySelector(peer.namespaceSelector))
                  : (peer.podSelector !== undefined && selects(peer.podSelector, labels)) ||
                    (peer.namespaceSelector !== undefined && !peer.podSelector),
              );
            return portOk && peerOk;
          }),
        );
      });
      out[`${target.metadata.name}:${port.containerPort}`] = sources.sort();
    }
  }
  return out;
}

const PEM_PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;
const SECRET_KEY_NAME = /secret|pass(word)?$|private|credential/i;

/**
 * No secret material in a ConfigMap: no PEM private key, no key named like a secret or password
 * holding a literal (an `${ENV}` reference is fine), and no value of any Secret given.
 */
export function secretInConfigMapProblems(objects: K8sObject[], secrets: K8sObject[]): string[] {
  const problems: string[] = [];
  // The secret values: whole values (a key, a password), and in the YAML files of Secrets
  // (secret.yml, clients.yml) the values of keys named like secrets.
  const secretValues: { value: string; where: string }[] = [];
  for (const s of byKind<DataObject>(secrets, 'Secret')) {
    for (const k of keysOf(s)) {
      const where = `Secret ${s.metadata.name} ${k}`;
      const text = decode(s, k)!.toString();
      if (!/\.ya?ml$/.test(k)) {
        if (text.trim().length >= 6) secretValues.push({ value: text.trim(), where });
        continue;
      }
      for (const [at, v] of leaves(parse(text))) {
        if (
          SECRET_KEY_NAME.test(at[at.length - 1] ?? '') &&
          typeof v === 'string' &&
          v.length >= 6
        ) {
          secretValues.push({ value: v, where });
        }
      }
    }
  }
  for (const cm of byKind<DataObject>(objects, 'ConfigMap')) {
    for (const key of keysOf(cm)) {
      const text = decode(cm, key)!.toString();
      if (PEM_PRIVATE_KEY.test(text)) problems.push(`${idOf(cm)} ${key}: holds a PEM private key`);
      // What the file says (a YAML file's values, not its comments), or the whole text.
      let values = [text];
      if (/\.ya?ml$/.test(key)) {
        values = [];
        for (const [at, v] of leaves(parse(text))) {
          if (typeof v !== 'string') continue;
          values.push(v);
          const name = at[at.length - 1] ?? '';
          if (SECRET_KEY_NAME.test(name) && v !== '' && !/^\$\{[^}]+\}$/.test(v)) {
            problems.push(`${idOf(cm)} ${key}: ${at.join('.')} holds a literal secret`);
          }
        }
      } else if (SECRET_KEY_NAME.test(key)) {
        problems.push(`${idOf(cm)}: key ${key} is named like a secret`);
      }
      const found = new Set<string>();
      for (const s of secretValues) {
        if (values.some((v) => v.includes(s.value))) found.add(s.where);
      }
      for (const where of found) problems.push(`${idOf(cm)} ${key}: holds the value of ${where}`);
    }
  }
  return problems;
}

/** Every leaf of a parsed YAML value with its key path. */
function leaves(value: unknown, at: string[] = []): [string[], unknown][] {
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => leaves(v, [...at, k]));
  }
  return [[at, value]];
}

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

/** Every problem of every check, for an overlay that must have none. */
export function allProblems(objects: K8sObject[], secrets: K8sObject[]): string[] {
  const all = [...objects, ...secrets];
  return [
    ...portProblems(all),
    ...referenceProblems(all),
    ...selectorProblems(all),
    ...secretInConfigMapProblems(objects, secrets),
    ...shutdownProblems(all),
    ...podSecurityProblems(all),
  ];
}

/** Writes a volume's files under `dir` with their modes (and the group fsGroup gives them). */
export function writeVolume(dir: string, files: VolumeFile[], gid?: number): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of files) {
    const file = path.join(dir, f.path);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, f.content, { mode: f.mode });
    fs.chmodSync(file, f.mode);
    if (gid !== undefined) fs.chownSync(file, 0, gid);
  }
  if (gid !== undefined) {
    const dirs = new Set(files.map((f) => path.dirname(path.join(dir, f.path))));
    for (const d of [dir, ...dirs]) {
      fs.chownSync(d, 0, gid);
      fs.chmodSync(d, 0o750);
    }
  }
}
