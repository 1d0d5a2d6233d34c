// The bench's picture: one SVG, two bar charts side by side (requests per second, and p99
// latency), one bar per measured case, the bare baseline and the peers coloured apart. Plain SVG
// text, no dependency: it renders in a browser, on GitHub and in an editor's preview.

const COLORS = {
  baseline: '#7f7f7f',
  peer: '#d62728',
  shipped: '#1f77b4',
  other: '#9ecae1',
};

const kindOf = (name) =>
  name === 'baseline'
    ? 'baseline'
    : name.startsWith('peer')
      ? 'peer'
      : name.startsWith('shipped') || name === 'soak'
        ? 'shipped'
        : 'other';

const escapeXml = (text) => String(text).replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

const fmt = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

/**
 * The SVG of `rows` (the bench table's rows that have req/s; the route and metrics
 * sub-benchmarks, which measure another thing, are left out). `title`: the run's date and machine.
 */
export function chartSvg(rows, title) {
  const bars = rows.filter(
    (r) =>
      typeof r.rps === 'number' &&
      r.rps > 0 &&
      !r.case.startsWith('route:') &&
      !r.case.startsWith('metrics:'),
  );
  const rowH = 22;
  const labelW = 170;
  const chartW = 300;
  const gap = 60;
  const top = 56;
  const height = top + bars.length * rowH + 40;
  const width = labelW + chartW * 2 + gap + 70;
  const maxRps = Math.max(...bars.map((r) => r.rps), 1);
  const maxP99 = Math.max(...bars.map((r) => r.p99 ?? 0), 1);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="10" y="18" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="${labelW}" y="${top - 12}" font-weight="bold">requests/s (median of the rounds; longer is better)</text>`,
    `<text x="${labelW + chartW + gap}" y="${top - 12}" font-weight="bold">p99 latency, ms (shorter is better)</text>`,
  ];
  bars.forEach((r, i) => {
    const y = top + i * rowH;
    const color = COLORS[kindOf(r.case)];
    const w1 = Math.max(1, (r.rps / maxRps) * chartW);
    const p99 = r.p99 ?? 0;
    const w2 = Math.max(1, (p99 / maxP99) * chartW);
    const x2 = labelW + chartW + gap;
    out.push(
      `<text x="${labelW - 8}" y="${y + 15}" text-anchor="end">${escapeXml(r.case)}</text>`,
      `<rect x="${labelW}" y="${y + 3}" width="${w1.toFixed(1)}" height="${rowH - 6}" fill="${color}"/>`,
      `<text x="${labelW + w1 + 4}" y="${y + 15}">${fmt(r.rps)}</text>`,
      `<rect x="${x2}" y="${y + 3}" width="${w2.toFixed(1)}" height="${rowH - 6}" fill="${color}"/>`,
      `<text x="${x2 + w2 + 4}" y="${y + 15}">${p99 ? fmt(p99) : '–'}</text>`,
    );
  });
  const legendY = top + bars.length * rowH + 22;
  let x = labelW;
  for (const [kind, label] of [
    ['baseline', 'bare node:https chain'],
    ['peer', 'peer: Fastify + fast-jwt + undici'],
    ['shipped', 'shipped configuration'],
    ['other', 'other configurations'],
  ]) {
    out.push(
      `<rect x="${x}" y="${legendY - 10}" width="12" height="12" fill="${COLORS[kind]}"/>`,
      `<text x="${x + 16}" y="${legendY}">${label}</text>`,
    );
    x += 24 + label.length * 6.2;
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
