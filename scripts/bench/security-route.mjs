#!/usr/bin/env node
// Verified requests per second on one protected route. One Express app per case, the same route
// (GET /v2/pet/1 needing scope read:pets) and the same RS256 token:
//   none                       no security at all (the ceiling)
//   chain-security cache on    @chain/security's request guard, enableJwtCache: true
//   chain-security cache off   @chain/security, enableJwtCache: false (signature every request)
//   express-oauth2-jwt-bearer  auth() + requiredScopes(), keys from a local JWKS
// Each app is loaded in turn by autocannon in a separate process on loopback, in rounds whose
// case order rotates (a shared 2-core machine is noisy); the script prints the median req/s and
// p99 latency per case and its ratio to express-oauth2-jwt-bearer, and writes the rows to the
// `--json` file (the row contract of scripts/bench/README.md). Needs `pnpm build`.
//
//   node scripts/bench/security-route.mjs [--quick] [--duration S] [--connections N]
//                                         [--rounds N] [--json FILE]
import '../lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import './lib/temp-root.mjs'; // first: every temporary folder under one, removed at exit
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import {
  createSigningKey,
  LOCAL_AUDIENCE,
  LOCAL_ISSUER,
  ROOT as root,
  runToExit,
  signToken,
  standardClaims,
  writeCertificate,
} from '@chain/testkit';
import { readOptions } from './lib/args.mjs';
import { subBenchOptions, subBenchUsage } from './lib/options.mjs';
import { median } from './lib/report.mjs';

const {
  values: { duration, connections, rounds, quick, json: jsonFile },
} = readOptions(
  subBenchOptions({ durationS: 5, connections: 20, rounds: 3 }),
  subBenchUsage('security-route.mjs'),
);

const requireRoot = createRequire(path.join(root, 'package.json'));
const requireRuntime = createRequire(path.join(root, 'packages', 'runtime', 'package.json'));
const dist = (pkg) => path.join(root, 'packages', pkg, 'dist', 'index.js');
for (const pkg of ['config', 'security']) {
  if (!fs.existsSync(dist(pkg))) {
    console.error(`${dist(pkg)} is missing: run pnpm build first`);
    process.exit(2);
  }
}
const express = requireRuntime('express');
const { auth, requiredScopes } = requireRoot('express-oauth2-jwt-bearer');
const { createRequestGuard, securityConfigSchema, toStatusError } = requireRoot(dist('security'));
const { ConfigLoader } = requireRoot(dist('config'));
const autocannon = requireRoot.resolve('autocannon/autocannon.js');

// The claims testkit puts in a token: the local token server's issuer and audience.
const ISSUER = LOCAL_ISSUER;
const AUDIENCE = LOCAL_AUDIENCE;
const SCOPE = 'read:pets';
const PET = {
  id: 1,
  name: 'Rex',
  photoUrls: [],
  category: { id: 1, name: 'Dogs' },
  tags: [],
  status: 'available',
};

const key = createSigningKey('100');
const certificate = writeCertificate(key, fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sec-')));
// No `typ`: express-oauth2-jwt-bearer accepts only at+jwt or none; scope as a string, which
// both read.
const token = signToken(
  key,
  standardClaims({ expiresIn: 3600, clientId: 'bench-client', scope: SCOPE }),
  { typ: undefined },
);

function listen(app) {
  return new Promise((resolve) => {
    const server = http.createServer(app);
    server.keepAliveTimeout = 30_000;
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function petApp(guard) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  for (const handler of guard) app.use(handler);
  app.get('/v2/pet/1', (_req, res) => res.json(PET));
  app.use((err, _req, res, _next) => {
    const status = err.status ?? err.statusCode ?? toStatusError(err).statusCode;
    res
      .status(status)
      .set(err.headers ?? {})
      .json({ code: err.code ?? 'error' });
  });
  return app;
}

/**
 * @chain/security as Express middleware: the guard the runtime's security stage calls, with a
 * security.yml read by the service's own loader and schema (every key at its default but these).
 */
function chainSecurity(enableJwtCache) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sec-yml-'));
  fs.writeFileSync(
    path.join(dir, 'security.yml'),
    `enableVerifyJwt: true
enableVerifyScope: true
jwt:
  certificate:
    '100': ${certificate}
logJwtToken: false
logClientUserScope: false
enableJwtCache: ${enableJwtCache}
`,
  );
  const config = new ConfigLoader({ bundledDir: dir, overrideDir: dir, env: {} }).load(
    'security',
    securityConfigSchema,
  );
  const { check } = createRequestGuard({ config });
  return (req, _res, next) =>
    check({
      authorization: req.headers.authorization,
      scopeToken: req.headers['x-scope-token'],
      requiredScopes: [SCOPE],
    }).then(() => next(), next);
}

const jwks = await listen((_req, res) => {
  const jwk = {
    ...key.publicKey.export({ format: 'jwk' }),
    kid: key.kid,
    alg: 'RS256',
    use: 'sig',
  };
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ keys: [jwk] }));
});
const jwksUri = `http://127.0.0.1:${jwks.address().port}/jwks`;

const cases = [
  ['none', []],
  ['chain-security cache on', [chainSecurity(true)]],
  ['chain-security cache off', [chainSecurity(false)]],
  [
    'express-oauth2-jwt-bearer',
    [
      auth({ issuer: ISSUER, audience: AUDIENCE, jwksUri, tokenSigningAlg: 'RS256' }),
      requiredScopes(SCOPE),
    ],
  ],
];

async function status(port, headers) {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/v2/pet/1', headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      })
      .on('error', reject);
  });
}

/** One autocannon run in its own process; resolves with its JSON result. */
async function load(port, seconds) {
  const { code, stdout, stderr } = await runToExit(autocannon, {
    args: [
      '-j',
      '-c',
      String(connections),
      '-d',
      String(seconds),
      '-H',
      `Authorization=Bearer ${token}`,
      `http://127.0.0.1:${port}/v2/pet/1`,
    ],
    timeoutMs: (seconds + 60) * 1000,
  });
  if (code !== 0) throw new Error(`autocannon exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}

const running = [];
for (const [name, guard] of cases) {
  const server = await listen(petApp(guard));
  const { port } = server.address();
  const ok = await status(port, { Authorization: `Bearer ${token}` });
  const refused = await status(port, {});
  if (ok !== 200 || (name !== 'none' && refused !== 401)) {
    console.error(`${name}: expected 200 with the token and 401 without, got ${ok} and ${refused}`);
    process.exit(1);
  }
  if (!quick) await load(port, 1); // warm-up
  running.push({ name, server, port, runs: [] });
}
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < running.length; i++) {
    const c = running[(i + round) % running.length];
    const r = await load(c.port, duration);
    const failed = r.non2xx + r.errors + r.timeouts;
    if (failed > 0) {
      console.error(
        `${c.name}: ${failed} requests failed (non-2xx ${r.non2xx}, errors ${r.errors})`,
      );
      process.exit(1);
    }
    c.runs.push({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 });
  }
}
const results = running.map((c) => ({
  name: c.name,
  rps: median(c.runs.map((r) => r.rps)),
  p50: median(c.runs.map((r) => r.p50)),
  p99: median(c.runs.map((r) => r.p99)),
  all: c.runs.map((r) => r.rps.toFixed(0)).join(' '),
}));
for (const c of running) {
  c.server.closeAllConnections();
  c.server.close();
}
jwks.close();

const BASELINE = 'express-oauth2-jwt-bearer';
const baseline = results.find((r) => r.name === BASELINE).rps;
console.log(
  `\nGET /v2/pet/1 with a verified RS256 token, ${connections} connections, ${duration} s each, ` +
    `${rounds} round(s), ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}, ` +
    `node ${process.version}`,
);
console.log(
  'case                        req/s (median)  p99 ms  vs express-oauth2-jwt-bearer  rounds',
);
for (const r of results) {
  console.log(
    `${r.name.padEnd(26)} ${r.rps.toFixed(0).padStart(14)} ${String(r.p99).padStart(7)} ` +
      `${((r.rps / baseline).toFixed(2) + 'x').padStart(29)}  ${r.all}`,
  );
}
if (jsonFile) {
  const rows = results.map((r) => ({
    case: r.name,
    rps: r.rps,
    p50: r.p50,
    p99: r.p99,
    rssMb: null,
    failed: 0,
    baseline: r.name === BASELINE ? null : BASELINE,
    ratio: r.name === BASELINE ? null : r.rps / baseline,
  }));
  fs.writeFileSync(jsonFile, JSON.stringify(rows, null, 2));
}
