// The one Markdown table, the targets with PASS/MISS, and the JSON written to bench/results/.
const num = (v, digits = 0) =>
  typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '–';

/** Fills `ratio` (rps / rps of the baseline row) where a row did not bring its own. */
export function withRatios(rows) {
  const byCase = new Map(rows.map((r) => [r.case, r]));
  return rows.map((r) => {
    if (r.ratio !== undefined && r.ratio !== null) return r;
    const base = r.baseline && byCase.get(r.baseline);
    return { ...r, ratio: base && base.rps && r.rps ? r.rps / base.rps : null };
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

/** The targets of issue 7, each a ratio (or a size) from this run. */
export function targets(rows) {
  const rps = (name) => rows.find((r) => r.case === name && !r.error)?.rps;
  const row = (name) => rows.find((r) => r.case === name && !r.error);
  const ratio = (a, b) => (rps(a) && rps(b) ? rps(a) / rps(b) : undefined);
  const list = [
    {
      what: 'chain security on (cache) / bare baseline',
      value: ratio('chain-cache', 'baseline'),
      min: 0.5,
    },
    {
      what: 'chain security on (cache) / security off',
      value: ratio('chain-cache', 'chain-open'),
      min: 0.85,
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
    { what: 'soak: failed requests', value: row('soak')?.failed, max: 0, unit: '' },
    {
      what: 'memory: RSS growth over the token run once the cache is full (MB)',
      value: row('tokens')?.rssGrowthMb,
      max: 100,
      unit: ' MB',
    },
  ];
  return list.map((t) => {
    const measured = typeof t.value === 'number' && Number.isFinite(t.value);
    const pass =
      measured &&
      (t.min !== undefined
        ? t.value >= t.min
        : t.value < t.max || (t.value === t.max && t.max === 0));
    return {
      what: t.what,
      value: measured ? t.value : null,
      target: t.min !== undefined ? `>= ${t.min}` : t.max === 0 ? '0' : `< ${t.max}`,
      verdict: measured ? (pass ? 'PASS' : 'MISS') : 'not run',
    };
  });
}

export function targetLines(list) {
  return list.map(
    (t) =>
      `- ${t.verdict.padEnd(7)} ${t.what}: ${t.value === null ? '–' : num(t.value, Number.isInteger(t.value) ? 0 : 2)} (target ${t.target})`,
  );
}
