import { parse } from 'yaml';
import { byKind, idOf, type DataObject, type K8sObject } from './objects.js';
import { decode, keysOf } from './pods.js';

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
