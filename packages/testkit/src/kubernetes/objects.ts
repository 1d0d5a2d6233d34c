// The Kubernetes objects the manifests hold, typed as far as the checks read them, and how to
// pick them out of a rendered overlay.

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
export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
export interface NetworkPolicyObject extends K8sObject {
  spec: {
    podSelector: LabelSelector;
    policyTypes?: string[];
    ingress?: {
      from?: NetworkPolicyPeer[];
      ports?: { port?: number | string; protocol?: string }[];
    }[];
  };
}
export interface DataObject extends K8sObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  stringData?: Record<string, string>;
  type?: string;
}

export const idOf = (o: K8sObject) => `${o.kind} ${o.metadata?.name}`;
export const byKind = <T extends K8sObject>(objects: K8sObject[], ...kinds: string[]) =>
  objects.filter((o) => kinds.includes(o.kind)) as T[];
export const workloads = (objects: K8sObject[]) =>
  byKind<Workload>(objects, 'Deployment', 'StatefulSet');
export const services = (objects: K8sObject[]) => byKind<ServiceObject>(objects, 'Service');
export const find = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name) as DataObject | undefined;
