// Imported first by every bench script that makes temporary files: all of them (its own and
// those of the processes it starts, which inherit TMPDIR) go under one folder of this run,
// removed when the script exits, whatever the cases left behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-bench-'));
process.env.TMPDIR = root;
process.on('exit', () => fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 }));
