// What the DPoP replay cache (security.yml dpop.replayCacheMaxEntries) holds in memory, full:
//
//   pnpm --filter @chain/security build && node --expose-gc scripts/bench/replay-cache-memory.mjs
//
// The cache is filled to the default bound with jtis of the usual kinds (a UUID, 36 characters,
// and 32 random bytes in base64url, 43) and of the longest accepted (128), each read by
// JSON.parse as from a proof; the heap is measured after a full garbage collection, before and
// after.
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { DpopReplayCache } = require('../../packages/security/dist/dpop-replay-cache.js');

if (typeof globalThis.gc !== 'function') {
  process.stderr.write('run with: node --expose-gc scripts/bench/replay-cache-memory.mjs\n');
  process.exit(2);
}

const ENTRIES = 100_000;
const kinds = {
  'base64url of 32 bytes (43)': () => crypto.randomBytes(32).toString('base64url'),
  'UUID (36)': () => crypto.randomUUID(),
  'longest accepted (128)': () => crypto.randomBytes(96).toString('base64url'),
};

const kept = [];
for (const [name, jti] of Object.entries(kinds)) {
  globalThis.gc();
  globalThis.gc();
  const before = process.memoryUsage().heapUsed;
  const cache = new DpopReplayCache(ENTRIES);
  const now = Date.now() / 1000;
  // A jti as the service holds it: read by JSON.parse from a proof's payload.
  for (let i = 0; i < ENTRIES; i++) cache.use(JSON.parse(`"${jti()}"`), now + 60, now);
  kept.push(cache);
  globalThis.gc();
  globalThis.gc();
  const bytes = process.memoryUsage().heapUsed - before;
  process.stdout.write(
    `${name}: ${cache.size} entries, ${(bytes / 2 ** 20).toFixed(1)} MiB, ${Math.round(bytes / cache.size)} bytes each\n`,
  );
}
