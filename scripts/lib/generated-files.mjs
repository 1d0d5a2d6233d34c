// @ts-check
// Files a script generates and keeps in the repository (the Dockerfiles, the Kubernetes
// workloads, the config trees): written by the script, or checked by `pnpm lint` (`--check`),
// which names every file that is not what the script makes.
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..', '..');

/**
 * Writes each file whose text differs, or with `check` only reports them: exits 1 naming them
 * and how to regenerate.
 * @param {Map<string, string>} files absolute path -> the text the script makes
 * @param {{ check: boolean, script: string, what: string, source?: string }} options `script`:
 *   the generator's path from the root; `what`: what the generated files are, and `source`:
 *   where to change them (default: the template in the script), for the message
 */
export function writeGenerated(files, { check, script, what, source = 'the template there' }) {
  /** @type {string[]} */
  const stale = [];
  for (const [file, text] of files) {
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    if (current === text) continue;
    if (check) stale.push(path.relative(root, file));
    else fs.writeFileSync(file, text);
  }
  if (stale.length > 0) {
    console.error(
      `not what ${script} makes: ${stale.join(', ')}\n` +
        `run \`node ${script}\` (edit ${source}, not the ${what})`,
    );
    process.exit(1);
  }
}
