// The systems compared side by side in rotating rounds (the bare chain, the peer, the service
// chain in each configuration, and the soak; peak RSS per
// service, CPU per request, and the load generator's share of the machine's CPU.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { autocannon } from './autocannon.mjs';
import { clientCredentialsToken, stopAll } from '@chain/testkit';
import { LOAD_CLIENT, closeLogs, startServiceChain } from './chain.mjs';
import { expectMessages } from './https-request.mjs';
import { readCpuMs, sampleRss } from './proc-stats.mjs';
import { median } from './report.mjs';
import { SYSTEMS, SYSTEM_NAMES, needsOf } from './systems.mjs';

const ALL = ['D', 'C', 'B', 'A'];
const short = (name) => name.replace(/^(api|bare|peer)-/, '');

/** Peak RSS per service, e.g. {a: 81.2, b: 80.9, ...}. */
const peaks = (rss) =>
  Object.fromEntries(Object.entries(rss).map(([n, s]) => [short(n), s.peakMb]));

/** The user's token for api-a and the petstore, from the real token server (client chain-user). */
export const userToken = (tokenServer) =>
  clientCredentialsToken(
    tokenServer.tokenUrl,
    'chain-user',
    'chain-user-secret',
    'api_a.r read:pets',
  );

const pct = (share) => (Number.isFinite(share) ? `${Math.round(share * 100)}%` : '–');

/** The shipped configuration's logs: a folder per run, one file per service (as .run/logs). */
const logDir = (ctx) => {
  ctx.logDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'bench-logs-'));
  return ctx.logDir;
};

export const CHAIN_CASES = SYSTEM_NAMES;
export { needsOf };

/** Every process of a system, workers included (their CPU and RSS count too). */
const processesOf = (system) => system.processes;

/**
 * The cases side by side: every system asked for is started (idle ones cost next to no CPU),
 * checked, warmed up, then loaded in `rounds` rounds whose order rotates, so that the noise of a
 * shared machine hits every case alike; each figure is the median of the rounds. With
 * `opts.together` every case of a round is loaded at the same time instead (CPU per request is
 * then the figure: the cases share the cores).
 */
export async function chainComparison(ctx, names) {
  const { opts, log } = ctx;
  const running = [];
  try {
    const shared = {
      tokenServer: names.some((n) => needsOf(n).includes('tokens'))
        ? await ctx.tokenServer()
        : undefined,
      mtlsTokenServer: names.some((n) => needsOf(n).includes('mtls-tokens'))
        ? await ctx.mtlsTokenServer()
        : undefined,
      influx: names.some((n) => needsOf(n).includes('influx')) ? await ctx.influx() : undefined,
    };
    const token = shared.tokenServer ? await userToken(shared.tokenServer) : undefined;
    const mtlsToken = shared.mtlsTokenServer ? await userToken(shared.mtlsTokenServer) : undefined;
    const env = {
      ...shared,
      logDir: logDir(ctx),
      baseRoot: opts.baseRoot,
      baseNode: opts.baseNode,
    };
    // All systems start at once: each starts its hops one after another, and they do not share
    // ports (port 0 everywhere).
    const started = await Promise.allSettled(
      names.map(async (name) => {
        const dir = path.join(env.logDir, name);
        fs.mkdirSync(dir, { recursive: true });
        const s = await SYSTEMS[name].start({ ...env, logDir: dir });
        running.push({ name, system: s });
        return s;
      }),
    );
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    running.sort((a, b) => names.indexOf(a.name) - names.indexOf(b.name));
    for (const c of running) {
      const mtls = needsOf(c.name).includes('mtls-tokens');
      const userTokenOf = mtls ? mtlsToken : needsOf(c.name).includes('tokens') ? token : null;
      c.headers = userTokenOf ? { Authorization: `Bearer ${userTokenOf}` } : {};
      // A chain on two-way TLS: the load generator presents a client certificate.
      c.client = mtls ? LOAD_CLIENT : undefined;
      Object.assign(c, {
        runs: [],
        cpuRounds: [],
        failed: 0,
        cpuMs: 0,
        loadCpuMs: 0,
        wallMs: 0,
        requests: 0,
      });
      await expectMessages(c.system.url, c.headers, ALL, c.client);
    }
    log(`${running.length} system(s) up: ${running.map((c) => c.name).join(', ')}`);
    if (opts.warmupS > 0) {
      for (const c of running) {
        log(`${c.name}: warm-up ${opts.warmupS} s`);
        await autocannon(c.system.url, {
          connections: opts.connections,
          durationS: opts.warmupS,
          headers: c.headers,
          client: c.client,
        });
      }
    }
    // One sampler per system: the service chains share process names (api-a ... api-d).
    for (const c of running) c.sampler = sampleRss(processesOf(c.system));
    const cpuOf = (c) => processesOf(c.system).reduce((sum, p) => sum + readCpuMs(p.pid), 0);
    const load = (c) =>
      autocannon(c.system.url, {
        connections: opts.connections,
        durationS: opts.durationS,
        headers: c.headers,
        client: c.client,
      });
    const count = (c, r, cpuMs, round) => {
      c.cpuMs += cpuMs;
      c.cpuRounds.push(r.total ? (cpuMs * 1000) / r.total : null);
      c.loadCpuMs += r.cpuMs;
      c.wallMs += r.durationMs;
      c.requests += r.total;
      c.runs.push(r);
      c.failed += r.failed;
      log(
        `round ${round + 1}/${opts.rounds} ${c.name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, ` +
          `p99 ${r.p99} ms, ${r.failed} failed`,
      );
    };
    for (let round = 0; round < opts.rounds; round++) {
      if (opts.together) {
        // Every case at once, each by its own load generator: a slower or faster spell of the
        // machine falls on every case in the same seconds.
        const cpuBefore = running.map(cpuOf);
        const results = await Promise.all(running.map(load));
        running.forEach((c, i) => count(c, results[i], cpuOf(c) - cpuBefore[i], round));
        continue;
      }
      for (let i = 0; i < running.length; i++) {
        const c = running[(i + round) % running.length];
        const cpuBefore = cpuOf(c);
        const r = await load(c);
        count(c, r, cpuOf(c) - cpuBefore, round);
      }
    }
    for (const c of running) c.rss = c.sampler.stop();
    const cores = os.cpus().length;
    return running.map((c) => ({
      case: c.name,
      rps: median(c.runs.map((r) => r.rps)),
      p50: median(c.runs.map((r) => r.p50)),
      p99: median(c.runs.map((r) => r.p99)),
      rssMb: peaks(c.rss),
      baseline: SYSTEMS[c.name].baseline,
      failed: c.failed,
      // CPU of the whole system (all its processes) per request: far less sensitive than req/s
      // to the other work on a shared machine.
      cpuUsPerRequest: c.requests ? (c.cpuMs * 1000) / c.requests : null,
      // The load generator's share of the machine (all cores) while it loaded this system.
      loadCpuShare: c.wallMs ? c.loadCpuMs / (c.wallMs * cores) : null,
      systemCpuShare: c.wallMs ? c.cpuMs / (c.wallMs * cores) : null,
      rounds: c.runs.map((r) => Math.round(r.rps)),
      cpuRounds: c.cpuRounds.map((us) => (us === null ? null : Math.round(us))),
      notes:
        (c.failed ? `${c.failed} failed; ` : '') +
        `req/s per round: ${c.runs.map((r) => r.rps.toFixed(0)).join(' ')}; CPU share: load generator ` +
        `${pct(c.loadCpuMs / (c.wallMs * cores))}, system ${pct(c.cpuMs / (c.wallMs * cores))}`,
    }));
  } finally {
    const all = running.flatMap((r) => processesOf(r.system));
    await stopAll(all);
    await closeLogs(all);
  }
}

async function withSystem(start, body) {
  const system = await start();
  try {
    return await body(system);
  } finally {
    await stopAll(system.processes);
    await closeLogs(system.processes);
  }
}

/**
 * The soak: the shipped configuration at 64 connections for a minute after a warm-up; no request
 * may fail, and RSS must not grow (each service's RSS after the warm-up and at the end).
 */
export const soak = async (ctx) => {
  const { opts, log } = ctx;
  const tokenServer = await ctx.tokenServer();
  const influx = await ctx.influx();
  return withSystem(
    () => startServiceChain({ security: 'shipped', tokenServer, influx, logDir: logDir(ctx) }),
    async (s) => {
      const headers = { Authorization: `Bearer ${await userToken(tokenServer)}` };
      await expectMessages(s.url, headers, ALL);
      const sampler = sampleRss(s.processes);
      log(`soak: warm-up ${opts.soakWarmupS} s at 64 connections`);
      const warm =
        opts.soakWarmupS > 0
          ? await autocannon(s.url, { connections: 64, durationS: opts.soakWarmupS, headers })
          : { failed: 0 };
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
        baseline: null,
        requests: r.total,
        rssWarmMb: Object.fromEntries(
          Object.entries(rss).map(([n, x]) => [short(n), x.marks.warm]),
        ),
        rssEndMb: Object.fromEntries(Object.entries(rss).map(([n, x]) => [short(n), x.marks.end])),
        rssGrowthMb: growth,
        maxRssGrowthMb: Math.max(...Object.values(growth)),
        notes:
          `shipped configuration; ${r.total} requests at 64 connections, ${failed} failed; RSS MB after warm-up → end: ` +
          Object.entries(rss)
            .map(([n, x]) => `${short(n)} ${x.marks.warm.toFixed(0)}→${x.marks.end.toFixed(0)}`)
            .join(', '),
      };
    },
  );
};
