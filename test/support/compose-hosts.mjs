// Tests only: resolves compose service names to loopback addresses, as Docker's embedded DNS
// resolves them on the compose network. test/e2e/compose-topology.test.ts loads it into each
// service process with NODE_OPTIONS=--import; no service or package ever loads it.
// CHAIN_HOSTS is a JSON object: {"api-b": "127.0.0.12", ...}. Other names go to the real
// resolver. Node's http, https and net call dns.lookup at connect time, so patching it here is
// enough for every client the services use (axios, jwks-rsa, https.request).
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';

const hosts = new Map(Object.entries(JSON.parse(process.env.CHAIN_HOSTS || '{}')));
const realLookup = dns.lookup;

dns.lookup = function composeLookup(hostname, options, callback) {
  const address = hosts.get(hostname);
  if (address === undefined) return realLookup.apply(this, arguments);
  const done = typeof options === 'function' ? options : callback;
  const all = typeof options === 'object' && options !== null && options.all === true;
  process.nextTick(() => (all ? done(null, [{ address, family: 4 }]) : done(null, address, 4)));
};
// Named imports of node:dns (`import { lookup } from 'node:dns'`) see it too.
syncBuiltinESMExports();
