// Jest's globalSetup and globalTeardown: every temporary file or folder a test run makes
// (os.tmpdir() in the tests, and in the processes they start) goes under one folder of its own,
// removed when the run ends, whatever the tests left behind.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const MARK = 'CHAIN_TEST_TMPDIR';

async function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-test-'));
  process.env[MARK] = root;
  // Read by os.tmpdir() in the test workers (forked after this) and every process they start.
  process.env.TMPDIR = root;
}

async function teardown() {
  const root = process.env[MARK];
  if (root && path.basename(root).startsWith('chain-test-')) {
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  }
}

module.exports = { setup, teardown };
