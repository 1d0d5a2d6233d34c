// The chain cases: the bare chain and the service chain (both hosts) under autocannon, and the
// soak; peak RSS per service.
import { autocannon } from './autocannon.mjs';
import { fetchToken, startBareChain, startServiceChain } from './chain.mjs';
import { expectMessages } from './https-request.mjs';
import { readCpuMs, sampleRss, stopAll } from './processes.mjs';

const ALL = ['D', 'C', 'B', 'A'];
const short = (name) => name.replace(/^(api|bare)-/, '');

/** Peak RSS per service, e.g. {a: 81.2, b: 80.9, ...}. */
const peaks = (rss) =>
  Object.fromEntries(Object.entries(rss).map(([n, s]) => [short(n), s.peakMb]));

/** The user's token for api-a, from the real token server (client chain-user, scope api_a.r). */
export const userToken = (tokenServer) =>
  fetchToken(tokenServer.tokenUrl, 'chain-user', 'chain-user-secret', 'api_a.r');

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const SYSTEMS = {
  baseline: { start: () => startBareChain(), baseline: null },
  'chain-open': { start: () => startServiceChain({ security: 'off' }), baseline: 'baseline' },
  'chain-cache': {
    start: (tokenServer) => startServiceChain({ security: 'cache', tokenServer }),
    baseline: 'chain-open',
    secured: true,
  },
  'chain-nocache': {
    start: (tokenServer) => startServiceChain({ security: 'nocache', tokenServer }),
    baseline: 'chain-open',
    secured: true,
  },
  // The same secured chain with every service on the Express host (server.yml framework).
  'chain-express': {
    start: (tokenServer) =>
      startServiceChain({ security: 'cache', tokenServer, framework: 'express' }),
    baseline: 'chain-cache',
    secured: true,
  },
};
export const CHAIN_CASES = Object.keys(SYSTEMS);

/**
 * The chain cases side by side: every chain asked for is started (idle ones cost no CPU), warmed up, then loaded in `rounds` rounds whose order rotates, so that the noise of a
 * shared machine hits every case alike; each figure is the median of the rounds.
 */
export async function chainComparison(ctx, names) {
  const { opts, log } = ctx;
  const running = [];
  try {
    const tokenServer = names.some((n) => SYSTEMS[n].secured) ? await ctx.tokenServer() : undefined;
    const token = tokenServer ? await userToken(tokenServer) : undefined;
    for (const name of names) {
      log(`${name}: starting`);
      const system = await SYSTEMS[name].start(tokenServer);
      const headers = SYSTEMS[name].secured ? { Authorization: `Bearer ${token}` } : {};
      running.push({ name, system, headers, runs: [], failed: 0, cpuMs: 0, requests: 0 });
      await expectMessages(system.url, headers, ALL);
      log(`${name}: warm-up ${opts.warmupS} s`);
      await autocannon(system.url, {
        connections: opts.connections,
        durationS: opts.warmupS,
        headers,
      });
    }
    // One sampler per chain: the service chains share process names (api-a ... api-d).
    for (const c of running) c.sampler = sampleRss(c.system.processes);
    for (let round = 0; round < opts.rounds; round++) {
      for (let i = 0; i < running.length; i++) {
        const c = running[(i + round) % running.length];
        const cpu = () => c.system.processes.reduce((sum, p) => sum + readCpuMs(p.pid), 0);
        const cpuBefore = cpu();
        const r = await autocannon(c.system.url, {
          connections: opts.connections,
          durationS: opts.durationS,
          headers: c.headers,
        });
        c.cpuMs += cpu() - cpuBefore;
        c.requests += r.total;
        c.runs.push(r);
        c.failed += r.failed;
        log(
          `round ${round + 1}/${opts.rounds} ${c.name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, ` +
            `p99 ${r.p99} ms, ${r.failed} failed`,
        );
      }
    }
    for (const c of running) c.rss = c.sampler.stop();
    return running.map((c) => ({
      case: c.name,
      rps: median(c.runs.map((r) => r.rps)),
      p50: median(c.runs.map((r) => r.p50)),
      p99: median(c.runs.map((r) => r.p99)),
      rssMb: peaks(c.rss),
      baseline: SYSTEMS[c.name].baseline,
      failed: c.failed,
      // CPU of the whole chain (all four processes) per request: far less sensitive than req/s
      // to the other work on a shared machine.
      cpuUsPerRequest: c.requests ? (c.cpuMs * 1000) / c.requests : null,
      rounds: c.runs.map((r) => Math.round(r.rps)),
      notes:
        (c.failed ? `${c.failed} failed; ` : '') +
        `req/s per round: ${c.runs.map((r) => r.rps.toFixed(0)).join(' ')}`,
    }));
  } finally {
    await stopAll(running.flatMap((r) => r.system.processes));
  }
}

async function withSystem(start, body) {
  const system = await start();
  try {
    return await body(system);
  } finally {
    await stopAll(system.processes);
  }
}

/** The soak: the secured chain (cache on) at 64 connections for a minute; RSS after warm-up, end. */
export const soak = async (ctx) => {
  const { opts, log } = ctx;
  const tokenServer = await ctx.tokenServer();
  return withSystem(
    () => startServiceChain({ security: 'cache', tokenServer }),
    async (s) => {
      const headers = { Authorization: `Bearer ${await userToken(tokenServer)}` };
      await expectMessages(s.url, headers, ALL);
      const sampler = sampleRss(s.processes);
      log(`soak: warm-up ${opts.soakWarmupS} s at 64 connections`);
      const warm = await autocannon(s.url, {
        connections: 64,
        durationS: opts.soakWarmupS,
        headers,
      });
      sampler.mark('warm');
      const fmt = (label) =>
        Object.entries(sampler.marks(label))
          .map(([n, mb]) => `${short(n)} ${mb.toFixed(0)}`)
          .join(' / ');
      log(`soak: RSS MB at warm-up end ${fmt('warm')}; ${opts.soakS} s at 64 connections`);
      const ticker = setInterval(() => {
        sampler.mark('now');
        log(`soak: RSS MB ${fmt('now')}`);
      }, 10000);
      const r = await autocannon(s.url, { connections: 64, durationS: opts.soakS, headers });
      clearInterval(ticker);
      sampler.mark('end');
      const rss = sampler.stop();
      const growth = Object.fromEntries(
        Object.entries(rss).map(([n, x]) => [short(n), x.marks.end - x.marks.warm]),
      );
      const failed = r.failed + warm.failed;
      log(
        `soak: ${r.total} requests, ${failed} failed, RSS growth after warm-up (MB) ${JSON.stringify(growth)}`,
      );
      return {
        case: 'soak',
        rps: r.rps,
        p50: r.p50,
        p99: r.p99,
        rssMb: peaks(rss),
        failed,
        baseline: 'chain-cache',
        requests: r.total,
        rssWarmMb: Object.fromEntries(
          Object.entries(rss).map(([n, x]) => [short(n), x.marks.warm]),
        ),
        rssEndMb: Object.fromEntries(Object.entries(rss).map(([n, x]) => [short(n), x.marks.end])),
        rssGrowthMb: growth,
        notes:
          `${r.total} requests at 64 connections, ${failed} failed; RSS MB after warm-up → end: ` +
          Object.entries(rss)
            .map(([n, x]) => `${short(n)} ${x.marks.warm.toFixed(0)}→${x.marks.end.toFixed(0)}`)
            .join(', '),
      };
    },
  );
};
