// Reads a V8 .cpuprofile (node --cpu-prof) and splits the CPU time into the parts of a hop:
// each sample goes to the innermost frame that names a part (a JSON.parse inside axios counts
// as JSON; a native RSA verify inside @chain/security counts as verification).
import fs from 'node:fs';

const PARTS = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['gc', (f) => f.functionName === '(garbage collector)'],
  ['native (program)', (f) => f.functionName === '(program)'],
  ['JSON', (f) => !f.url && /^(parse|stringify|JSONParse|JSONStringify)$/.test(f.functionName)],
  ['verification (@chain/security)', (f) => /packages\/security\/|jsonwebtoken|jose/.test(f.url)],
  ['token client (@chain/oauth-client)', (f) => /packages\/oauth-client\/dist\/token/.test(f.url)],
  [
    'downstream client (oauth-client/axios)',
    (f) => /axios|packages\/oauth-client\/|follow-redirects|form-data/.test(f.url),
  ],
  ['logging (pino)', (f) => /pino|sonic-boom/.test(f.url)],
  ['metrics', (f) => /packages\/metrics\/|prom-client/.test(f.url)],
  ['OpenAPI routing', (f) => /packages\/openapi\//.test(f.url)],
  ['runtime (correlation, errors)', (f) => /packages\/runtime\//.test(f.url)],
  ['chain handler', (f) => /packages\/chain\/|bare-hop/.test(f.url)],
  [
    'framework (express)',
    (f) =>
      /node_modules\/.*(express|router|body-parser|finalhandler|send|serve-static|qs|on-finished|type-is|content-type|accepts|negotiator|mime|etag|fresh|depd|statuses|parseurl|proxy-addr|raw-body|iconv|debug)/.test(
        f.url,
      ),
  ],
  ['TLS', (f) => /node:(_tls|tls|internal\/tls|https)|_tls_wrap/.test(f.url)],
  ['HTTP (node core)', (f) => /node:(_http|http|internal\/http)/.test(f.url)],
  [
    'socket I/O: TLS encrypt + syscalls',
    (f) =>
      /node:(net|internal\/stream|stream|internal\/streams|internal\/timers|timers|events|internal\/process|internal\/async_hooks)/.test(
        f.url,
      ),
  ],
];

/**
 * Milliseconds of CPU per part (idle excluded from `busyMs`). `window`: only the samples taken
 * between `fromUs` and `toUs` (microseconds of the monotonic clock, as `process.hrtime.bigint()`
 * / 1000 reads it in any process of the machine: V8 stamps its samples on the same clock), so
 * that the start-up of the process does not count.
 */
export function splitProfile(file, window) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const partOf = new Map();
  const classify = (id) => {
    if (partOf.has(id)) return partOf.get(id);
    let part = 'other';
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur).callFrame;
      const hit = PARTS.find(([, test]) => test(frame));
      if (hit) {
        part = hit[0];
        break;
      }
    }
    partOf.set(id, part);
    return part;
  };
  const ms = {};
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window.fromUs || at > window.toUs)) return;
    const part = classify(id);
    ms[part] = (ms[part] ?? 0) + delta / 1000;
  });
  const busyMs = Object.entries(ms)
    .filter(([part]) => part !== 'idle')
    .reduce((sum, [, v]) => sum + v, 0);
  return { ms, busyMs };
}
