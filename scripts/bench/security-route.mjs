#!/usr/bin/env node
// Verified requests per second on one protected route. One app per case, the same route
// (GET /v2/pet/1 needing scope read:pets) and the same RS256 token. Express:
//   none                       no security at all (the ceiling)
//   chain-security cache on    @chain/security/express, enableJwtCache: true
//   chain-security cache off   @chain/security/express, enableJwtCache: false (signature every request)
//   express-oauth2-jwt-bearer  auth() + requiredScopes(), keys from a local JWKS
// Fastify 5, the scope in the route's config:
//   fastify: none                       no security at all
//   fastify: chain-security cache on    the @chain/security/fastify plugin, enableJwtCache: true
//   fastify: chain-security cache off   the plugin, enableJwtCache: false
//   fastify: @fastify/jwt cache on      @fastify/jwt (fast-jwt, its cache on) with the public key,
//                                       request.jwtVerify() and the scope matched in an onRequest hook
//   fastify: @fastify/jwt cache off     the same, fast-jwt's cache off
// Each app is loaded in turn by autocannon in a separate process on loopback, in rounds whose
// case order rotates (a shared 2-core machine is noisy); every app runs in this process, so its
// CPU time during a case's load (process.cpuUsage) is that case's. The script prints the median
// req/s, p99 latency and CPU per request of each case and its ratio to its baseline (the median
// of the per-round ratios, in req/s and in CPU per request), and writes the rows to the `--json`
// file (the row contract of scripts/bench/README.md). Needs `pnpm build`.
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
const dist = (name) => path.join(root, 'packages', 'security', 'dist', `${name}.js`);
for (const name of ['express', 'fastify']) {
  if (!fs.existsSync(dist(name))) {
    console.error(`${dist(name)} is missing: run pnpm build first`);
    process.exit(2);
  }
}
const express = requireRuntime('express');
const Fastify = requireRoot('fastify');
const fastifyJwt = requireRoot('@fastify/jwt');
const { auth, requiredScopes } = requireRoot('express-oauth2-jwt-bearer');
const { createExpressVerifier } = requireRoot(dist('express'));
const { fastifySecurity } = requireRoot(dist('fastify'));
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
    res
      .status(err.status ?? err.statusCode ?? 500)
      .set(err.headers ?? {})
      .json({ code: err.code ?? 'error' });
  });
  return app;
}

/** A Fastify app whose one route needs SCOPE (its `config.scopes`), listening on loopback. */
async function fastifyApp(register) {
  const app = Fastify({ logger: false });
  await register(app);
  app.get('/v2/pet/1', { config: { scopes: [SCOPE] } }, async () => PET);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.server;
}

/** security.yml as the services read it (every key at its default but these): its path. */
function securityYml(enableJwtCache) {
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
  return path.join(dir, 'security.yml');
}

/** @fastify/jwt as its README has it, and the scope matched as light-4j does (one of them). */
const fastifyJwtGuard = (cache) => async (app) => {
  const publicKey = key.publicKey.export({ type: 'spki', format: 'pem' });
  await app.register(fastifyJwt, {
    secret: { public: publicKey },
    verify: { algorithms: ['RS256'], cache },
  });
  app.addHook('onRequest', async (request, reply) => {
    try {
      await request.jwtVerify();
    } catch {
      return reply
        .code(401)
        .header('WWW-Authenticate', 'Bearer realm="api"')
        .send({ code: 'ERR10000' });
    }
    const { scope } = request.user;
    const held = typeof scope === 'string' ? scope.split(' ') : (scope ?? []);
    const needed = request.routeOptions.config.scopes ?? [];
    if (needed.length > 0 && !needed.some((s) => held.includes(s))) {
      return reply.code(403).send({ code: 'ERR10005' });
    }
  });
};

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

const BASELINE = 'express-oauth2-jwt-bearer';
const FASTIFY_JWT = 'fastify: @fastify/jwt cache on';
const expressCase = (name, guard) => [name, BASELINE, () => listen(petApp(guard))];
const fastifyCase = (name, baseline, register) => [name, baseline, () => fastifyApp(register)];
const plugin = (enableJwtCache) => (app) =>
  app.register(fastifySecurity, { config: securityYml(enableJwtCache) });
// [name, the case its ratios are to (none for a baseline), the server it loads]
const cases = [
  expressCase('none', []),
  expressCase('chain-security cache on', [
    createExpressVerifier({ config: securityYml(true) })([SCOPE]),
  ]),
  expressCase('chain-security cache off', [
    createExpressVerifier({ config: securityYml(false) })([SCOPE]),
  ]),
  [
    BASELINE,
    null,
    () =>
      listen(
        petApp([
          auth({ issuer: ISSUER, audience: AUDIENCE, jwksUri, tokenSigningAlg: 'RS256' }),
          requiredScopes(SCOPE),
        ]),
      ),
  ],
  fastifyCase('fastify: none', FASTIFY_JWT, async () => undefined),
  fastifyCase('fastify: chain-security cache on', FASTIFY_JWT, plugin(true)),
  fastifyCase(
    'fastify: chain-security cache off',
    'fastify: @fastify/jwt cache off',
    plugin(false),
  ),
  fastifyCase(FASTIFY_JWT, null, fastifyJwtGuard(true)),
  fastifyCase('fastify: @fastify/jwt cache off', null, fastifyJwtGuard(false)),
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
for (const [name, baseline, start] of cases) {
  const server = await start();
  const { port } = server.address();
  const ok = await status(port, { Authorization: `Bearer ${token}` });
  const refused = await status(port, {});
  if (ok !== 200 || (!name.endsWith('none') && refused !== 401)) {
    console.error(`${name}: expected 200 with the token and 401 without, got ${ok} and ${refused}`);
    process.exit(1);
  }
  if (!quick) await load(port, 1); // warm-up
  running.push({ name, baseline, server, port, runs: [] });
}
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < running.length; i++) {
    const c = running[(i + round) % running.length];
    const cpu = process.cpuUsage();
    const r = await load(c.port, duration);
    const { user, system } = process.cpuUsage(cpu);
    const failed = r.non2xx + r.errors + r.timeouts;
    if (failed > 0) {
      console.error(
        `${c.name}: ${failed} requests failed (non-2xx ${r.non2xx}, errors ${r.errors})`,
      );
      process.exit(1);
    }
    const cpuUs = (user + system) / r.requests.total;
    c.runs.push({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, cpuUs });
  }
}
const byName = new Map(running.map((c) => [c.name, c]));
/** The median of the per-round ratios to the baseline: req/s, and CPU per request (base / case). */
const ratios = (c) => {
  const base = byName.get(c.baseline);
  if (!base) return { rps: null, cpu: null };
  const each = (f) => median(c.runs.map((r, i) => f(r, base.runs[i])));
  return { rps: each((r, b) => r.rps / b.rps), cpu: each((r, b) => b.cpuUs / r.cpuUs) };
};
const results = running.map((c) => ({
  name: c.name,
  baseline: c.baseline,
  rps: median(c.runs.map((r) => r.rps)),
  p50: median(c.runs.map((r) => r.p50)),
  p99: median(c.runs.map((r) => r.p99)),
  cpuUs: median(c.runs.map((r) => r.cpuUs)),
  ratio: ratios(c),
  runs: c.runs,
}));
for (const c of running) {
  c.server.closeAllConnections();
  c.server.close();
}
jwks.close();

const times = (v) => (v === null ? '–' : `${v.toFixed(2)}x`);
console.log(
  `\nGET /v2/pet/1 with a verified RS256 token, ${connections} connections, ${duration} s each, ` +
    `${rounds} round(s), ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}, ` +
    `node ${process.version}`,
);
console.log(
  'case                                req/s (median)  p99 ms  CPU µs/req  req/s ratio  CPU ratio  baseline',
);
for (const r of results) {
  console.log(
    `${r.name.padEnd(34)} ${r.rps.toFixed(0).padStart(14)} ${String(r.p99).padStart(7)} ` +
      `${r.cpuUs.toFixed(0).padStart(11)} ${times(r.ratio.rps).padStart(12)} ` +
      `${times(r.ratio.cpu).padStart(10)}  ${r.baseline ?? '–'}`,
  );
}
if (jsonFile) {
  const rows = results.map((r) => ({
    case: r.name,
    rps: r.rps,
    p50: r.p50,
    p99: r.p99,
    cpuUsPerRequest: r.cpuUs,
    rssMb: null,
    failed: 0,
    baseline: r.baseline,
    ratio: r.ratio.rps,
    rounds: r.runs.map((run) => run.rps),
    cpuRounds: r.runs.map((run) => run.cpuUs),
    notes: r.baseline
      ? `CPU per request ratio ${times(r.ratio.cpu)} (the baseline's / this one's); req/s per round: ${r.runs.map((run) => run.rps.toFixed(0)).join(' ')}`
      : `req/s per round: ${r.runs.map((run) => run.rps.toFixed(0)).join(' ')}`,
  }));
  fs.writeFileSync(jsonFile, JSON.stringify(rows, null, 2));
}
