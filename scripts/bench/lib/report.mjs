// The one Markdown table, the targets with PASS/MISS, and the JSON written to bench/results/.
const num = (v, digits = 0) =>
  typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '–';

/** The median of some figures (the mean of the two middle ones for an even count). */
export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * The ratio of two rows' req/s. Rows measured in the same rounds (the chain cases) are compared
 * round by round and the median of those ratios is taken: neighbours in time share the
 * background load of the machine, so drift across rounds cancels out.
 */
export function rpsRatio(row, base) {
  if (!row?.rps || !base?.rps) return null;
  if (row.rounds?.length && row.rounds.length === base.rounds?.length) {
    return median(row.rounds.map((rps, i) => rps / base.rounds[i]));
  }
  return row.rps / base.rps;
}

/**
 * The ratio of two rows' CPU per request, base / row (above 1: the row costs less), round by
 * round as `rpsRatio` when both were measured in the same rounds.
 */
export function cpuRatio(row, base) {
  if (!row?.cpuUsPerRequest || !base?.cpuUsPerRequest) return null;
  const a = row.cpuRounds;
  const b = base.cpuRounds;
  if (a?.length && a.length === b?.length && a.every(Boolean) && b.every(Boolean)) {
    return median(a.map((us, i) => b[i] / us));
  }
  return base.cpuUsPerRequest / row.cpuUsPerRequest;
}

/** Fills `ratio` (req/s against the baseline row) where a row did not bring its own. */
export function withRatios(rows) {
  const byCase = new Map(rows.map((r) => [r.case, r]));
  return rows.map((r) => {
    if (r.ratio !== undefined && r.ratio !== null) return r;
    return { ...r, ratio: r.baseline ? rpsRatio(r, byCase.get(r.baseline)) : null };
  });
}

const rssCell = (rss) => {
  if (rss === null || rss === undefined) return '–';
  if (typeof rss === 'number') return num(rss);
  return Object.entries(rss)
    .map(([n, mb]) => `${n} ${num(mb)}`)
    .join(', ');
};

export function markdownTable(rows) {
  const lines = [
    '| case | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB | baseline | ratio | notes |',
    '|---|---:|---:|---:|---:|---|---|---:|---|',
  ];
  for (const r of rows) {
    const ratio =
      r.ratio === null || r.ratio === undefined
        ? '–'
        : `${num(r.ratio, 2)}${r.metric ? ` (${r.metric})` : ''}`;
    const notes = r.error
      ? `FAILED: ${r.error}`
      : (r.notes ?? (r.failed ? `${r.failed} failed` : ''));
    lines.push(
      `| ${r.case} | ${num(r.rps)} | ${num(r.p50, r.p50 < 10 ? 1 : 0)} | ${num(r.p99, r.p99 < 10 ? 1 : 0)} | ${num(r.cpuUsPerRequest)} | ${rssCell(r.rssMb)} | ${r.baseline ?? '–'} | ${ratio} | ${notes.replace(/\|/g, '/')} |`,
    );
  }
  return lines.join('\n');
}

/** The better of the two peers (HTTP/1.1 and HTTP/2 between hops) in this run, by req/s. */
export function bestPeer(rows) {
  const peers = rows.filter(
    (r) => (r.case === 'peer' || r.case === 'peer-h2') && r.rps && !r.error,
  );
  return peers.sort((a, b) => b.rps - a.rps)[0];
}

/**
 * The targets, each a ratio (or a size) from this run; a row without `min`/`max` is reported
 * for information (the Express host is the user's choice, not a target). A row with `cpuMin`
 * too passes only when its CPU ratio reaches it as well.
 */
export function targets(rows) {
  const row = (name) => rows.find((r) => r.case === name && !r.error);
  const ratio = (a, b) => rpsRatio(row(a), row(b)) ?? undefined;
  // The same comparison in CPU per request (base / case): steadier on a busy machine.
  const cpu = (a, b) => cpuRatio(row(a), row(b)) ?? undefined;
  const peer = bestPeer(rows)?.case;
  const h2 = row('shipped-h2') && row('shipped-h1');
  const soakRow = row('soak');
  const list = [
    {
      what: 'shipped configuration / bare baseline',
      value: ratio('shipped', 'baseline'),
      min: 0.8,
      cpu: cpu('shipped', 'baseline'),
    },
    {
      what: `shipped configuration / best peer (${peer ?? 'peer'}: Fastify + fast-jwt + undici)`,
      value: peer ? ratio('shipped', peer) : undefined,
      min: 1.1,
      cpu: peer ? cpu('shipped', peer) : undefined,
    },
    {
      // The peer doing per request all a shipped hop does (two tokens, an audit line into a
      // file, prom-client, correlation and trace ids): judged in req/s and in CPU per request.
      what: 'shipped configuration / peer-full (the peer doing all our hops do)',
      value: ratio('shipped', 'peer-full'),
      min: 1.1,
      cpu: cpu('shipped', 'peer-full'),
      cpuMin: 1.1,
    },
    {
      what: 'shipped: audit on / audit off',
      value: ratio('shipped', 'shipped-no-audit'),
      min: 0.9,
      cpu: cpu('shipped', 'shipped-no-audit'),
    },
    {
      what: 'shipped: metrics on / metrics off',
      value: ratio('shipped', 'shipped-no-metrics'),
      min: 0.95,
      cpu: cpu('shipped', 'shipped-no-metrics'),
    },
    {
      what: 'shipped: a second identical shipped chain / shipped (the noise floor of the two above)',
      value: ratio('shipped-control', 'shipped'),
      cpu: cpu('shipped-control', 'shipped'),
    },
    {
      what: 'shipped: this checkout / --base checkout',
      value: ratio('shipped', 'shipped-base'),
      cpu: cpu('shipped', 'shipped-base'),
    },
    {
      what: 'shipped: every hop on mTLS with certificate-bound tokens / shipped',
      value: ratio('shipped-mtls', 'shipped'),
      cpu: cpu('shipped-mtls', 'shipped'),
    },
    {
      what: 'shipped: token exchange at every hop (cache warm) / shipped',
      value: ratio('shipped-exchange', 'shipped'),
      cpu: cpu('shipped-exchange', 'shipped'),
    },
    {
      what: 'shipped: HTTP/2 between hops / HTTP/1.1 keep-alive',
      value: h2 ? ratio('shipped-h2', 'shipped-h1') : undefined,
      cpu: h2 ? cpu('shipped-h2', 'shipped-h1') : undefined,
    },
    {
      what: 'peer: HTTP/2 between hops / HTTP/1.1 keep-alive',
      value: ratio('peer-h2', 'peer'),
      cpu: cpu('peer-h2', 'peer'),
    },
    {
      what: 'chain security on (cache) / bare baseline',
      value: ratio('chain-cache', 'baseline'),
      min: 0.5,
      cpu: cpu('chain-cache', 'baseline'),
    },
    {
      what: 'chain security on (cache) / security off',
      value: ratio('chain-cache', 'chain-open'),
      min: 0.85,
      cpu: cpu('chain-cache', 'chain-open'),
    },
    {
      what: 'chain security on (cache), Express host / native host',
      value: ratio('chain-express', 'chain-cache'),
      cpu: cpu('chain-express', 'chain-cache'),
    },
    {
      what: '@chain/security cache on / express-oauth2-jwt-bearer',
      value: ratio('route: chain-security cache on', 'route: express-oauth2-jwt-bearer'),
      min: 1.5,
    },
    {
      what: '@chain/security cache off / express-oauth2-jwt-bearer',
      value: ratio('route: chain-security cache off', 'route: express-oauth2-jwt-bearer'),
      min: 1.0,
    },
    {
      what: '@chain/security/fastify cache on / @fastify/jwt cache on (Fastify 5, one route)',
      value: ratio(
        'route: fastify: chain-security cache on',
        'route: fastify: @fastify/jwt cache on',
      ),
      min: 1.0,
      cpu: cpu('route: fastify: chain-security cache on', 'route: fastify: @fastify/jwt cache on'),
    },
    {
      // wrk takes less CPU than autocannon for the same load (docs/benchmarks.md, the workers
      // case): on a 2-core machine, the cores left to the service decide this ratio. The target
      // is on the wrk run; the autocannon run is shown beside it.
      what: 'petstore 2 workers / 1 worker (wrk as the load generator, on the same cores)',
      value: ratio('workers: petstore 2 workers (wrk)', 'workers: petstore 1 worker (wrk)'),
      min: 1.3,
      cpu: cpu('workers: petstore 2 workers (wrk)', 'workers: petstore 1 worker (wrk)'),
    },
    {
      what: 'petstore 2 workers / 1 worker (autocannon as the load generator, on the same cores)',
      value: ratio('workers: petstore 2 workers', 'workers: petstore 1 worker'),
      cpu: cpu('workers: petstore 2 workers', 'workers: petstore 1 worker'),
    },
    { what: 'soak: failed requests', value: soakRow?.failed, max: 0, unit: '' },
    {
      what: 'soak: largest RSS growth of a service after the warm-up (MB)',
      value: soakRow?.maxRssGrowthMb,
      max: 100,
      unit: ' MB',
    },
    { what: 'tokens: failed requests', value: row('tokens')?.failed, max: 0, unit: '' },
    {
      what: 'tokens: RSS growth over the token run once the cache is full (MB)',
      value: row('tokens')?.rssGrowthMb,
      max: 100,
      unit: ' MB',
    },
  ];
  return list.map((t) => {
    const measured = typeof t.value === 'number' && Number.isFinite(t.value);
    if (t.min === undefined && t.max === undefined) {
      return {
        what: t.what,
        value: measured ? t.value : null,
        target: 'none',
        verdict: measured ? 'info' : 'not run',
        cpuRatio: t.cpu ?? null,
      };
    }
    const pass =
      measured &&
      (t.min !== undefined
        ? t.value >= t.min
        : t.value < t.max || (t.value === t.max && t.max === 0)) &&
      (t.cpuMin === undefined || (typeof t.cpu === 'number' && t.cpu >= t.cpuMin));
    return {
      what: t.what,
      value: measured ? t.value : null,
      target: t.min !== undefined ? `>= ${t.min}` : t.max === 0 ? '0' : `< ${t.max}`,
      verdict: measured ? (pass ? 'PASS' : 'MISS') : 'not run',
      cpuRatio: t.cpu ?? null,
      ...(t.cpuMin !== undefined && { cpuTarget: `>= ${t.cpuMin}` }),
    };
  });
}

export function targetLines(list) {
  return list.map(
    (t) =>
      `- ${t.verdict.padEnd(7)} ${t.what}: ${t.value === null ? '–' : num(t.value, Number.isInteger(t.value) ? 0 : 2)} (target ${t.target})` +
      (t.cpuRatio || t.cpuTarget
        ? `; in CPU per request ${t.cpuRatio ? num(t.cpuRatio, 2) : '–'}` +
          (t.cpuTarget ? ` (target ${t.cpuTarget})` : '')
        : ''),
  );
}
