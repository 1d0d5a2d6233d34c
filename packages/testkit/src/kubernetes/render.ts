import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../paths.js';
import type { K8sObject } from './objects.js';

// The Kubernetes manifests as data: rendered by kubectl's kustomize, and the Secrets
// scripts/kubernetes-secrets.mjs makes. The checks (api-schemas.ts, wiring-checks.ts,
// network-policies.ts, secret-checks.ts, pod-checks.ts) each return their problems as sentences
// (an empty list when all is well), so a test asserts both the real overlays (none) and
// deliberately broken fixtures (exactly the expected ones); the container test turns the local
// overlay into containers with the same reading of the objects (pods.ts, cluster-simulation.ts).

export const KUBERNETES_DIR = path.join(ROOT, 'deploy', 'kubernetes');
export const OVERLAYS = {
  local: path.join(KUBERNETES_DIR, 'overlays', 'local'),
  production: path.join(KUBERNETES_DIR, 'overlays', 'production'),
};

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
    throw new Error(`kubectl ${args.join(' ')}: ${(e.stderr || e.message).trim()}`, {
      cause: err,
    });
  }
}

/** One YAML document. */
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
