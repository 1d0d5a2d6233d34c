// The CPU cost of one DPoP proof (RFC 9449) as a downstream call makes it: DpopKey.proof (jose's
// SignJWT, ES256, a random jti, the token's ath), one at a time and 16 at once, after a warm-up:
//
//   pnpm --filter @chain/oauth-client build && node scripts/bench/dpop-proof-cost.mjs
//
// Prints microseconds per proof (the median of ROUNDS rounds of PROOFS proofs each) and, for
// comparison, the same signature made with node:crypto alone (what jose adds around it).
import { createRequire } from 'node:module';
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';

const require = createRequire(import.meta.url);
const { DpopKey } = require('../../packages/oauth-client/dist/dpop-key.js');

const PROOFS = 5000;
const ROUNDS = 7;
const URL_OF_CALL = new URL('https://localhost:7442/v1/data');
const TOKEN = `eyJhbGciOiJSUzI1NiJ9.${'x'.repeat(600)}.${'s'.repeat(342)}`;

const key = new DpopKey();

/** node:crypto only: the same header and claims, signed with ieee-p1363 ECDSA. */
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
const header = Buffer.from(
  JSON.stringify({ alg: 'ES256', typ: 'dpop+jwt', jwk: { kty, crv, x, y } }),
).toString('base64url');
const bare = () => {
  const claims = {
    htm: 'GET',
    htu: URL_OF_CALL.origin + URL_OF_CALL.pathname,
    ath: createHash('sha256').update(TOKEN).digest('base64url'),
    iat: Math.floor(Date.now() / 1000),
    jti: randomUUID(),
  };
  const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = sign('sha256', Buffer.from(input), {
    key: privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  return Promise.resolve(`${input}.${signature.toString('base64url')}`);
};
const viaJose = () => key.proof('GET', URL_OF_CALL, TOKEN);

async function round(make, concurrency) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < PROOFS; i += concurrency) {
    await Promise.all(Array.from({ length: concurrency }, make));
  }
  return Number(process.hrtime.bigint() - started) / 1000 / PROOFS;
}

async function measure(name, make, concurrency) {
  await round(make, concurrency); // warm-up
  const times = [];
  for (let r = 0; r < ROUNDS; r++) times.push(await round(make, concurrency));
  times.sort((a, b) => a - b);
  const median = times[Math.floor(ROUNDS / 2)];
  process.stdout.write(
    `${name.padEnd(28)} ${String(concurrency).padStart(2)} at once: ${median.toFixed(1)} µs per proof (min ${times[0].toFixed(1)}, max ${times[ROUNDS - 1].toFixed(1)})\n`,
  );
}

process.stdout.write(`node ${process.version}, ${PROOFS} proofs x ${ROUNDS} rounds (median)\n`);
for (const concurrency of [1, 16]) {
  await measure('DpopKey.proof (jose)', viaJose, concurrency);
  await measure('node:crypto sign only', bare, concurrency);
}
