import path from 'node:path';

/** The repository's root (this file is two folders below packages/testkit, in src or dist). */
export const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');

/** The development certificates (scripts/gen-certs.sh): $CERTS_DIR, or certs/ of the root. */
export const CERTS = process.env.CERTS_DIR ?? path.join(ROOT, 'certs');

/** The development signing keys by kid: certs/<name>.key and certs/<name>.crt. */
export const DEV_KEYS = { '100': 'primary', '101': 'secondary' } as const;
export type DevKid = keyof typeof DEV_KEYS;

/** A built service's entry, of this checkout or of another one's root (the bench's `--base`). */
export const serviceEntry = (name: string, root = ROOT): string =>
  path.join(root, 'services', name, 'dist', 'index.js');
