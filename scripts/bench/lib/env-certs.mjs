// The development certificates of a process the bench starts and measures (a hop, the load of
// the tokens case): the folder CERTS_DIR names, as the runner sets it. These processes load
// nothing of the workspace, so that their memory and CPU are their own work's.
import fs from 'node:fs';
import path from 'node:path';

/** CERTS_DIR; exits 2 naming it when it is not set or holds no ca.crt. */
export function certsFromEnv() {
  const dir = process.env.CERTS_DIR;
  if (!dir || !fs.existsSync(path.join(dir, 'ca.crt'))) {
    console.error(
      `CERTS_DIR must name the development certificates (pnpm certs), got ${JSON.stringify(dir ?? '')}`,
    );
    process.exit(2);
  }
  return dir;
}
