import { isDeepStrictEqual } from 'node:util';
import { ConfigError } from '@chain/errors';

/** A light-4j key read but not implemented: `note` goes in the warning; `same` loads silently. */
export interface Light4jKey {
  note?: string;
  same?: unknown;
}

export interface FileKeys {
  /** Dotted path -> light-4j key, with its subtree (`oauth.sign`); `*`: each key of a map. */
  light4j?: Readonly<Record<string, Light4jKey>>;
  /** Other name -> the name the schema reads (`oauth.token.key` -> `oauth.key`). */
  aliases?: Readonly<Record<string, string>>;
}

/** Never the value. */
export interface ConfigWarning {
  file: string;
  key?: string;
  message: string;
}

type Tree = Record<string, unknown>;

const isTree = (v: unknown): v is Tree => v !== null && typeof v === 'object' && !Array.isArray(v);

function get(tree: Tree, path: string[]): unknown {
  let node: unknown = tree;
  for (const part of path) {
    if (!isTree(node) || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}

/** Removes a key, and the maps that held nothing else, down to depth `keep`. */
function remove(tree: Tree, path: string[], keep: number): void {
  for (let depth = path.length; depth > keep; depth--) {
    const parent = get(tree, path.slice(0, depth - 1));
    if (!isTree(parent)) return;
    delete parent[path[depth - 1]];
    if (depth === 1 || Object.keys(parent).length > 0) return;
  }
}

function set(tree: Tree, path: string[], value: unknown): boolean {
  let node: Tree = tree;
  for (const part of path.slice(0, -1)) {
    if (node[part] === undefined) node[part] = {};
    if (!isTree(node[part])) return false;
    node = node[part];
  }
  node[path[path.length - 1]] = value;
  return true;
}

function merge(a: unknown, b: unknown, at: string[], conflict: (path: string[]) => never): unknown {
  if (isTree(a) && isTree(b)) {
    const out: Tree = { ...a };
    for (const [k, v] of Object.entries(b)) {
      out[k] = k in out ? merge(out[k], v, [...at, k], conflict) : v;
    }
    return out;
  }
  if (!isDeepStrictEqual(a, b)) conflict(at);
  return a;
}

/** `moved`: [to, from] of each alias, to name errors as written. */
export function prepareKeys(file: string, raw: unknown, keys: FileKeys | undefined) {
  const moved: [to: string, from: string][] = [];
  if (!keys || !isTree(raw)) return { value: raw, warnings: [], moved };
  const value = structuredClone(raw);
  const warnings: ConfigWarning[] = [];
  for (const [key, spec] of Object.entries(keys.light4j ?? {})) {
    const parts = key.split('.');
    const star = parts.indexOf('*');
    const map = star < 0 ? undefined : get(value, parts.slice(0, star));
    const ids = isTree(map) ? Object.keys(map) : [];
    const paths = star < 0 ? [parts] : ids.map((id) => parts.map((p, i) => (i === star ? id : p)));
    for (const path of paths) {
      const found = get(value, path);
      if (found === undefined) continue;
      remove(value, path, star + 1);
      if ('same' in spec && isDeepStrictEqual(found, spec.same)) continue;
      const note = spec.note ? ` (${spec.note})` : '';
      const message = `light-4j key not supported here; ignored${note}`;
      warnings.push({ file, key: path.join('.'), message });
    }
  }
  for (const [from, to] of Object.entries(keys.aliases ?? {})) {
    const fromPath = from.split('.');
    const found = get(value, fromPath);
    if (found === undefined) continue;
    remove(value, fromPath, 0);
    const toPath = to.split('.');
    const existing = get(value, toPath);
    const conflict = (at: string[]): never => {
      throw new ConfigError(
        file,
        [from, ...at].join('.'),
        `is set twice with different values, also as "${[to, ...at].join('.')}"; keep one`,
      );
    };
    const merged = existing === undefined ? found : merge(existing, found, [], conflict);
    if (set(value, toPath, merged)) moved.push([to, from]);
  }
  return { value, warnings, moved };
}

export function keyAsWritten(key: string, moved: [to: string, from: string][]): string {
  for (const [to, from] of moved) {
    if (key === to || key.startsWith(to + '.')) return from + key.slice(to.length);
  }
  return key;
}

export function extraKeysAt(keys: FileKeys | undefined, path: string[]): string[] {
  const names = [...Object.keys(keys?.light4j ?? {}), ...Object.keys(keys?.aliases ?? {})];
  const prefix = path.length ? path.join('.') + '.' : '';
  return names
    .filter((name) => name.startsWith(prefix))
    .map((name) => name.slice(prefix.length).split('.')[0]);
}
