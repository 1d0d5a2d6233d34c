// Where the bench's own things are (the repository root, the certificates and the built
// services are @chain/testkit's ROOT, CERTS and serviceEntry).
import fs from 'node:fs';
import path from 'node:path';
import { CERTS, ROOT, serviceEntry } from '@chain/testkit';

export const BENCH_DIR = path.join(ROOT, 'scripts', 'bench');
export const RESULTS_DIR = path.join(ROOT, 'bench', 'results');

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
