// Cases 1-4 and 6: the bare chain and the service chain under autocannon, peak RSS per service.
import { autocannon } from './autocannon.mjs';
import { fetchToken, startBareChain, startServiceChain } from './chain.mjs';
import { expectMessages } from './https-request.mjs';
import { sampleRss, stopAll } from './processes.mjs';

const ALL = ['D', 'C', 'B', 'A'];
const short = (name) => name.replace(/^(api|bare)-/, '');

/** Peak RSS per service, e.g. {a: 81.2, b: 80.9, ...}. */
const peaks = (rss) =>
  Object.fromEntries(Object.entries(rss).map(([n, s]) => [short(n), s.peakMb]));

/** The user's token for api-a, from the real token server (client chain-user, scope api_a.r). */
export const userToken = (tokenServer) =>
  fetchToken(tokenServer.tokenUrl, 'chain-user', 'chain-user-secret', 'api_a.r');

async function measure(ctx, name, system, headers) {
  const { opts, log } = ctx;
  await expectMessages(system.url, headers, ALL);
  log(`${name}: warm-up ${opts.warmupS} s`);
  await autocannon(system.url, { connections: opts.connections, durationS: opts.warmupS, headers });
  log(`${name}: ${opts.durationS} s at ${opts.connections} connections`);
  const sampler = sampleRss(system.processes);
  const r = await autocannon(system.url, {
    connections: opts.connections,
    durationS: opts.durationS,
    headers,
  });
  const rss = sampler.stop();
  log(`${name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.failed} failed`);
  return { case: name, rps: r.rps, p50: r.p50, p99: r.p99, rssMb: peaks(rss), failed: r.failed };
}

async function withSystem(start, body) {
  const system = await start();
  try {
    return await body(system);
  } finally {
    await stopAll(system.processes);
  }
}

export const baseline = (ctx) => withSystem(startBareChain, (s) => measure(ctx, 'baseline', s, {}));

export const chainOpen = (ctx) =>
  withSystem(
    () => startServiceChain({ security: 'off' }),
    async (s) => ({ ...(await measure(ctx, 'chain-open', s, {})), baseline: 'baseline' }),
  );

export const chainSecured = (security) => async (ctx) => {
  const tokenServer = await ctx.tokenServer();
  const name = security === 'cache' ? 'chain-cache' : 'chain-nocache';
  return withSystem(
    () => startServiceChain({ security, tokenServer }),
    async (s) => {
      const headers = { Authorization: `Bearer ${await userToken(tokenServer)}` };
      return { ...(await measure(ctx, name, s, headers)), baseline: 'chain-open' };
    },
  );
};

/** Case 6: the secured chain (cache on) at 64 connections for a minute; RSS after warm-up, end. */
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
