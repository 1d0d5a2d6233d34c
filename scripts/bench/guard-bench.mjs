// What the request guard costs per request on the paths of sender-constrained tokens, measured
// on the built package (microseconds per check, one at a time, the token already cached):
//
//   pnpm --filter @chain/security build && node scripts/bench/guard-bench.mjs
//   node scripts/bench/guard-bench.mjs --compare <another build of src> --only unbound
//
// `--compare DIR` builds a second guard from DIR (a copy of another commit's dist/ inside
// packages/security, so that its imports resolve) and alternates rounds of the two in this one
// process: on a shared machine that cancels most of the noise of other processes.
//
// Cases: an unbound Bearer token (every request of a chain without bound tokens); a token bound
// to the connection's client certificate; a DPoP-bound token with a fresh proof per request (the
// proof's signature, its jwk imported, its thumbprint and the replay cache: no cache helps
// there). Keys: certs/primary.key (run scripts/gen-certs.sh first).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { readOptions } from './lib/args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const { values } = readOptions(
  {
    dist: { kind: 'text', default: path.join(here, '..', '..', 'packages', 'security', 'dist') },
    only: { kind: 'text', choices: ['unbound', 'certificate-bound', 'dpop-bound'] },
    compare: { kind: 'text' },
  },
  'node scripts/bench/guard-bench.mjs [--dist DIR] [--compare DIR] [--only unbound|certificate-bound|dpop-bound]',
);
const dist = path.resolve(values.dist);
const { only, compare } = values;
const guardOf = (dir) => createRequire(path.join(dir, 'index.js'))(path.join(dir, 'index.js'));

const certs = path.join(root, 'certs');
const signingKey = crypto.createPrivateKey(fs.readFileSync(path.join(certs, 'primary.key')));
const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const sign = (key, header, payload, alg) => {
  const input = `${b64(header)}.${b64(payload)}`;
  const options = alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key;
  return `${input}.${crypto.sign('sha256', Buffer.from(input), options).toString('base64url')}`;
};
const now = Math.floor(Date.now() / 1000);
const token = (extra = {}) =>
  sign(
    signingKey,
    { alg: 'RS256', typ: 'JWT', kid: '100' },
    { exp: now + 3600, iat: now, client_id: 'bench', scope: ['read:pets'], ...extra },
  );

// security.yml with its defaults, verification on and the development certificate of kid 100, read by the loader
// the services use.
const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-bench-'));
fs.writeFileSync(
  path.join(configDir, 'security.yml'),
  `enableVerifyJwt: true\njwt:\n  certificate:\n    '100': ${path.join(certs, 'primary.crt')}\nlogJwtToken: false\n`,
);
const { ConfigLoader } = createRequire(path.join(dist, 'index.js'))('@chain/config');
const config = new ConfigLoader({
  bundledDir: configDir,
  overrideDir: '/nonexistent',
  env: {},
}).load(['openapi-security', 'security'], guardOf(dist).securityConfigSchema);
fs.rmSync(configDir, { recursive: true });
const guards = [[compare ? 'this' : '', guardOf(dist)]];
if (compare) guards.push(['compared', guardOf(path.resolve(compare))]);
const checks = guards.map(([label, { createRequestGuard }]) => [
  label,
  createRequestGuard({ config, env: {} }).check,
]);

const base = {
  scopeToken: undefined,
  requiredScopes: ['read:pets'],
  path: '/v2/pet/1',
  method: 'GET',
  host: 'localhost:8443',
  secure: true,
};
const thumbprint = crypto.randomBytes(32).toString('base64url');
const dpopKeys = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwk = dpopKeys.publicKey.export({ format: 'jwk' });
const jkt = crypto
  .createHash('sha256')
  .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
  .digest('base64url');
const unbound = token();
const certBound = token({ cnf: { 'x5t#S256': thumbprint } });
const dpopBound = token({ cnf: { jkt } });
const ath = crypto.createHash('sha256').update(dpopBound).digest('base64url');
const proof = () =>
  sign(
    dpopKeys.privateKey,
    { typ: 'dpop+jwt', alg: 'ES256', jwk },
    {
      jti: crypto.randomUUID(),
      htm: 'GET',
      htu: 'https://localhost:8443/v2/pet/1',
      iat: Math.floor(Date.now() / 1000),
      ath,
    },
    'ES256',
  );

const cases = {
  unbound: { n: 200_000, request: () => ({ ...base, authorization: `Bearer ${unbound}` }) },
  'certificate-bound': {
    n: 200_000,
    request: () => ({
      ...base,
      authorization: `Bearer ${certBound}`,
      clientCertThumbprint: thumbprint,
    }),
  },
  'dpop-bound': {
    n: 5_000,
    // The proofs are made before the clock starts: the client's cost is not the service's.
    prepare: (n) => Array.from({ length: n }, proof),
    request: (proofs, i) => ({ ...base, authorization: `DPoP ${dpopBound}`, dpop: proofs[i] }),
  },
};

async function run(name, { n, prepare, request }) {
  const round = async (check) => {
    const prepared = prepare?.(n);
    const requests = Array.from({ length: n }, (_, i) => request(prepared, i));
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    for (let i = 0; i < n; i++) await check(requests[i]);
    const used = process.cpuUsage(cpu);
    return {
      wall: Number(process.hrtime.bigint() - start) / 1000 / n,
      cpu: (used.user + used.system) / n,
    };
  };
  const rounds = checks.map(() => []);
  for (const [, check] of checks) await round(check); // warm-up (and the token cached)
  for (let r = 0; r < 7; r++) {
    for (let g = 0; g < checks.length; g++) rounds[g].push(await round(checks[g][1]));
  }
  // The CPU time of the process: on a shared machine the wall time also counts the waits.
  const median = (list, key) =>
    list
      .map((r) => r[key])
      .sort((a, b) => a - b)[3]
      .toFixed(2);
  checks.forEach(([label], g) => {
    process.stdout.write(
      `${name}${label ? ` (${label})` : ''}: ${median(rounds[g], 'cpu')} us CPU, ` +
        `${median(rounds[g], 'wall')} us wall per check (median of 7 rounds of ${n})\n`,
    );
  });
}

for (const [name, c] of Object.entries(cases)) {
  if (only && only !== name) continue;
  await run(name, c);
}
