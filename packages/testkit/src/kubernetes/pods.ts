import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  find,
  idOf,
  type Container,
  type DataObject,
  type K8sObject,
  type KeyToPath,
  type LabelSelector,
  type Volume,
  type Workload,
} from './objects.js';

// Pods as the kubelet makes them from the objects: which pods a selector selects, the files of
// their volumes, their environment, their config files.

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

export const podLabels = (w: Workload) => w.spec.template.metadata.labels ?? {};
export const isEmptySelector = (s: LabelSelector | undefined) =>
  !!s && Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;

export const decode = (o: DataObject, key: string): Buffer | undefined => {
  if (o.data?.[key] !== undefined) {
    return o.kind === 'Secret' ? Buffer.from(o.data[key], 'base64') : Buffer.from(o.data[key]);
  }
  if (o.binaryData?.[key] !== undefined) return Buffer.from(o.binaryData[key], 'base64');
  if (o.stringData?.[key] !== undefined) return Buffer.from(o.stringData[key]);
  return undefined;
};
export const keysOf = (o: DataObject) => [
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
