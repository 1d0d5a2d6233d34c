#!/usr/bin/env node
// Case 1 of the benchmark: one hop of the bare chain, node:https alone (no framework, no
// security, no config loader). GET /v1/data answers `[...downstream, "API X: Message 1",
// "API X: Message 2"]` like api-x, over the same TLS certificates, calling its downstream with a
// keep-alive agent that trusts the dev CA. Logs its port as the runtime does.
//
//   CERTS_DIR=certs node scripts/bench/bare-hop.mjs --letter A [--downstream https://localhost:N/v1/data]
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { readOptions } from './lib/args.mjs';
import { certsFromEnv } from './lib/env-certs.mjs';

const { values } = readOptions(
  {
    letter: { kind: 'text', choices: ['A', 'B', 'C', 'D'], default: 'D' },
    downstream: { kind: 'url' },
  },
  'CERTS_DIR=certs node scripts/bench/bare-hop.mjs --letter A|B|C|D [--downstream URL]',
);
const { letter, downstream } = values;
const CERTS = certsFromEnv();
const own = [`API ${letter}: Message 1`, `API ${letter}: Message 2`];
const agent = new https.Agent({
  keepAlive: true,
  ca: fs.readFileSync(path.join(CERTS, 'ca.crt')),
});

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

function callDownstream(correlationId) {
  return new Promise((resolve, reject) => {
    const req = https.get(
      downstream,
      {
        agent,
        timeout: 3000,
        headers: { Accept: 'application/json', 'X-Correlation-Id': correlationId },
      },
      (res) => {
        const chunks = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`downstream ${res.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('downstream time-out')));
    req.on('error', reject);
  });
}

const server = https.createServer(
  {
    key: fs.readFileSync(path.join(CERTS, 'server.key')),
    cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
  },
  (req, res) => {
    if (req.method !== 'GET' || req.url !== '/v1/data') return send(res, 404, { code: 'ERR10007' });
    if (!downstream) return send(res, 200, own);
    const correlationId = req.headers['x-correlation-id'] ?? randomUUID();
    callDownstream(correlationId).then(
      (body) => send(res, 200, [...body, ...own]),
      () => send(res, 502, { code: 'ERR20004' }),
    );
  },
);
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  console.log(JSON.stringify({ protocol: 'https', port, msg: `listening on https port ${port}` }));
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
});
