// Where things are: the repository root, the generated certificates, the built services.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BENCH_DIR = path.join(ROOT, 'scripts', 'bench');
export const CERTS = process.env.CERTS_DIR ?? path.join(ROOT, 'certs');
export const RESULTS_DIR = path.join(ROOT, 'bench', 'results');

/** A built service's entry, of this checkout or of another (`root`: the bench's `--base`). */
export const serviceEntry = (name, root = ROOT) =>
  path.join(root, 'services', name, 'dist', 'index.js');

/** A temporary CONFIG_DIR override folder holding the given files (name -> content). */
export function configDir(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-config-'));
  for (const [name, content] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/** Fails early, with the command to run, when the build or the certificates are missing. */
export function checkPrerequisites(services, root = ROOT) {
  const missing = [
    path.join(CERTS, 'ca.crt'),
    ...services.map((s) => serviceEntry(s, root)),
  ].filter((file) => !fs.existsSync(file));
  if (missing.length) {
    const where = root === ROOT ? '' : ` in ${root}`;
    throw new Error(`missing ${missing.join(', ')}: run pnpm certs && pnpm build${where} first`);
  }
}

/** The chart of the latest full run, shown in docs/benchmarks.md. */
export const DOCS_CHART = path.join(ROOT, 'docs', 'benchmarks-latest.svg');
