#!/usr/bin/env node
// Case 7 load generator: sends `--tokens N` GET requests, each with its own distinct, valid RS256
// token (kid 100, signed with certs/primary.key like the local token server's), over
// `--connections C` keep-alive connections. RS256 signing costs far more than sending a
// request, so worker threads sign in batches ahead of the senders while the senders run.
// Progress lines on stdout: {"progress":true,"sent":n,"ok":n,"failed":n}; the last line:
// {"done":true,"sent":n,"ok":n,"failed":n,"rps":x,"p50":ms,"p99":ms,"statuses":{...}}.
//
//   CERTS_DIR=certs node scripts/bench/token-flood.mjs --url https://localhost:N/v1/data --tokens 1000000
//     [--connections 16] [--workers 2] [--scope api_d.r]
import { randomUUID, createPrivateKey, sign } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { readOptions } from './lib/args.mjs';
import { certsFromEnv } from './lib/env-certs.mjs';

const BATCH = 256;
const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');

function signer({ keyFile, scope, workerIndex }) {
  const key = createPrivateKey(fs.readFileSync(keyFile));
  const header = b64({ alg: 'RS256', typ: 'JWT', kid: '100' });
  const now = Math.floor(Date.now() / 1000);
  let n = 0;
  parentPort.on('message', (count) => {
    const tokens = [];
    for (let i = 0; i < count; i++) {
      const payload = b64({
        iss: 'https://localhost:6882',
        aud: 'urn:chain:api',
        iat: now,
        nbf: now - 60,
        exp: now + 7200,
        jti: `${workerIndex}-${n++}-${randomUUID()}`,
        client_id: 'bench-client',
        scope: [scope],
      });
      const input = `${header}.${payload}`;
      tokens.push(`${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`);
    }
    parentPort.postMessage(tokens);
  });
}

async function main() {
  const { values } = readOptions(
    {
      url: { kind: 'url', required: true },
      tokens: { kind: 'count', default: 1_000_000 },
      connections: { kind: 'count', default: 16 },
      workers: { kind: 'count', default: 2 },
      scope: { kind: 'text', default: 'api_d.r' },
    },
    'CERTS_DIR=certs node scripts/bench/token-flood.mjs --url URL [--tokens N] [--connections N] [--workers N] [--scope S]',
  );
  const { url, tokens: total, connections, workers, scope } = values;
  const certs = certsFromEnv();
  const keyFile = path.join(certs, 'primary.key');

  // Signing: each worker keeps at most two batches in flight; the senders take from `ready`.
  const ready = [];
  let requested = 0;
  const waiting = [];
  const pool = Array.from({ length: workers }, (_, workerIndex) => {
    const worker = new Worker(fileURLToPath(import.meta.url), {
      workerData: { keyFile, scope, workerIndex },
    });
    worker.on('message', (tokens) => {
      ready.push(...tokens);
      ask(worker);
      for (const wake of waiting.splice(0)) wake();
    });
    worker.on('error', (err) => {
      console.error(`signing worker failed: ${err.message}`);
      process.exit(1);
    });
    return worker;
  });
  const ask = (worker) => {
    if (requested >= total || ready.length > BATCH * workers * 4) return;
    const count = Math.min(BATCH, total - requested);
    requested += count;
    worker.postMessage(count);
  };
  for (const w of pool) {
    ask(w);
    ask(w);
  }
  const nextToken = async () => {
    while (ready.length === 0) await new Promise((resolve) => waiting.push(resolve));
    const token = ready.pop();
    if (ready.length < BATCH * workers) for (const w of pool) ask(w);
    return token;
  };

  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: connections,
    ca: fs.readFileSync(path.join(certs, 'ca.crt')),
  });
  const get = (token) =>
    new Promise((resolve) => {
      const req = https.get(
        url,
        { agent, timeout: 10000, headers: { Authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode));
        },
      );
      req.on('timeout', () => req.destroy(new Error('time-out')));
      req.on('error', () => resolve('error'));
    });

  const latencies = new Float64Array(total);
  const statuses = {};
  let sent = 0;
  let ok = 0;
  let answered = 0;
  const started = performance.now();
  const progress = setInterval(() => {
    console.log(JSON.stringify({ progress: true, sent: answered, ok, failed: answered - ok }));
  }, 2000);
  const sender = async () => {
    while (sent < total) {
      const index = sent++;
      const token = await nextToken();
      const t0 = performance.now();
      const status = await get(token);
      latencies[index] = performance.now() - t0;
      statuses[status] = (statuses[status] ?? 0) + 1;
      answered++;
      if (status === 200) ok++;
    }
  };
  await Promise.all(Array.from({ length: connections }, sender));
  const seconds = (performance.now() - started) / 1000;
  clearInterval(progress);
  await Promise.all(pool.map((w) => w.terminate()));
  agent.destroy();
  const sorted = latencies.sort();
  const at = (q) => Math.round(sorted[Math.min(total - 1, Math.floor(q * total))] * 100) / 100;
  console.log(
    JSON.stringify({
      done: true,
      sent,
      ok,
      failed: sent - ok,
      rps: sent / seconds,
      p50: at(0.5),
      p99: at(0.99),
      statuses,
    }),
  );
}

if (isMainThread) await main();
else signer(workerData);
