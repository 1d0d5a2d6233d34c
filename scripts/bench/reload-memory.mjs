#!/usr/bin/env node
// What configuration reloads leave in a service's memory: the built petstore (security on, with
// the services' node flags) reloaded `--reloads` times by SIGHUP, each reload waited for in its
// log and followed by a verified request; memory is read inside the process after a full garbage
// collection, before, right after the last reload, and after `--idle` seconds with nothing to do.
//
//   pnpm build && node scripts/bench/reload-memory.mjs [--reloads N] [--idle S]
//
// "in use" is V8's heap after the collection (what the reloads keep); "committed" what V8 holds
// from the system for its heap, and RSS the process's resident memory.
import '../lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  configDir,
  devSigningKey,
  httpsRequest,
  jwtSecurityYml,
  mintToken,
  serverYml,
  startService,
} from '@chain/testkit';
import { readOptions } from './lib/args.mjs';
import { SERVICE_NODE_FLAGS } from '../lib/service-node-flags.mjs';

const USAGE = 'node scripts/bench/reload-memory.mjs [--reloads N] [--idle S]';
const { values: options } = readOptions(
  { reloads: { kind: 'count', default: 100 }, idle: { kind: 'seconds', default: 10 } },
  USAGE,
);

// Loaded into the service: on SIGUSR2, two full collections, then one JSON line to a file.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reload-memory-'));
const probe = path.join(dir, 'probe.mjs');
const out = path.join(dir, 'memory.jsonl');
fs.writeFileSync(
  probe,
  `import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
process.on('SIGUSR2', () => {
  gc();
  gc();
  const { rss, heapUsed, heapTotal } = process.memoryUsage();
  fs.appendFileSync(${JSON.stringify(out)}, JSON.stringify({ rss, heapUsed, heapTotal }) + '\\n');
});
`,
);

const key = devSigningKey('100');
const token = mintToken(key, { scope: ['read:pets'] });
const petstore = await startService('petstore', {
  configDir: configDir({
    'server.yml': serverYml('reload-memory'),
    'security.yml': jwtSecurityYml({ scope: true, kids: ['100'] }),
    'prometheus.yml': 'enabled: true\n',
  }),
  nodeArgs: [...SERVICE_NODE_FLAGS, '--import', probe],
});

const readings = () => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8').trim().split('\n') : []);
const rows = [];
async function measure(when) {
  const before = readings().length;
  petstore.child.kill('SIGUSR2');
  const until = Date.now() + 10_000;
  while (readings().length === before) {
    if (Date.now() > until) throw new Error('the service did not answer SIGUSR2 within 10 s');
    await new Promise((r) => setTimeout(r, 20));
  }
  const m = JSON.parse(readings().at(-1));
  const mb = (bytes) => (bytes / 1e6).toFixed(1);
  rows.push(`| ${when} | ${mb(m.heapUsed)} | ${mb(m.heapTotal)} | ${mb(m.rss)} |`);
  process.stdout.write(`${when}: heap in use ${mb(m.heapUsed)} MB, RSS ${mb(m.rss)} MB\n`);
}
async function request() {
  const res = await httpsRequest(`https://localhost:${petstore.port}/v2/pet/1`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (res.status !== 200) throw new Error(`GET /v2/pet/1 answered ${res.status}`);
}

const reloaded = (l) => l.includes('"msg":"configuration reloaded"');
try {
  for (let i = 0; i < 20; i++) await request();
  await measure('started, 20 requests');
  const started = Date.now();
  for (let i = 1; i <= options.reloads; i++) {
    const target = petstore.lines.filter(reloaded).length + 1;
    let seen = 0;
    petstore.child.kill('SIGHUP');
    await petstore.waitForLine((l) => reloaded(l) && ++seen === target, 10_000);
    await request();
    if (i % 25 === 0) process.stdout.write(`${i} of ${options.reloads} reloads\n`);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  await measure(`right after ${options.reloads} reloads (${seconds} s)`);
  await new Promise((r) => setTimeout(r, options.idle * 1000));
  await measure(`${options.idle} s later, idle`);
  process.stdout.write(
    `\n| when | heap in use MB | heap committed MB | RSS MB |\n|---|---:|---:|---:|\n${rows.join('\n')}\n`,
  );
} finally {
  await petstore.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
