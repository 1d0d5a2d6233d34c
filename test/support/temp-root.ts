// Vitest's global setup: every temporary file or folder a test run makes (os.tmpdir() in the
// tests, and in the processes they start) goes under one folder of its own, removed when the run
// ends, whatever the tests left behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-test-'));
  // Read by os.tmpdir() in the test workers (forked after this) and every process they start.
  process.env.TMPDIR = root;
  return () => fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
}
