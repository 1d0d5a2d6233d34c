import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Makes a temporary folder holding the given files (name -> content): a service's CONFIG_DIR
 * override folder.
 */
export function configDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-config-'));
  for (const [name, content] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}
