// Case 7: distinct valid tokens through one service (api-d, security on, cache on), sent by
// token-flood.mjs in its own process; RSS sampled at start, once the cache is full, at the end.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CERTS, stopAll } from '@chain/testkit';
import { startServiceChain } from './chain.mjs';
import { BENCH_DIR } from './paths.mjs';
import { sampleRss } from './proc-stats.mjs';

/** The cache bound of security.yml (jwt.cacheMaxEntries default). */
const CACHE_MAX = 10000;

export const tokens = async (ctx) => {
  const { opts, log } = ctx;
  const system = await startServiceChain({ security: 'cache', only: 'd' });
  const [service] = system.processes;
  const sampler = sampleRss(system.processes, 500);
  sampler.mark('start');
  // After this many tokens the cache is full and the heap has grown to its working size.
  const warmAt = Math.min(opts.tokens, Math.max(CACHE_MAX * 3, Math.floor(opts.tokens / 10)));
  try {
    log(
      `tokens: ${opts.tokens} distinct RS256 tokens through api-d (cache on), RSS at start ${sampler.marks('start')['api-d'].toFixed(0)} MB`,
    );
    const done = await new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          path.join(BENCH_DIR, 'token-flood.mjs'),
          '--url',
          system.url,
          '--tokens',
          String(opts.tokens),
          '--connections',
          String(Math.min(opts.connections, 32)),
        ],
        { env: { ...process.env, CERTS_DIR: CERTS }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let buffer = '';
      let stderr = '';
      let last;
      let warmed = false;
      const started = Date.now();
      child.stderr.on('data', (d) => (stderr += d));
      child.stdout.on('data', (d) => {
        buffer += d;
        let nl;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const event = JSON.parse(buffer.slice(0, nl));
          buffer = buffer.slice(nl + 1);
          if (!warmed && (event.sent >= warmAt || event.done)) {
            warmed = true;
            sampler.mark('warm');
          }
          if (event.done) last = event;
          else {
            sampler.mark('now');
            const s = Math.round((Date.now() - started) / 1000);
            log(
              `tokens: ${event.sent}/${opts.tokens} sent, ${event.failed} failed, ${s} s, RSS ${sampler.marks('now')['api-d'].toFixed(0)} MB`,
            );
          }
        }
      });
      child.once('exit', (code) =>
        code === 0 && last
          ? resolve(last)
          : reject(new Error(`token-flood exited ${code}: ${stderr}`)),
      );
    });
    sampler.mark('end');
    const rss = sampler.stop()['api-d'];
    // Growth once the cache is full and the heap has reached its working size: what would grow
    // without bound if the cache were not bounded. The rise from the idle start is shown too.
    const growth = rss.peakMb - rss.marks.warm;
    log(
      `tokens: ${done.ok} ok, ${done.failed} failed ${JSON.stringify(done.statuses)}; RSS MB start ${rss.marks.start.toFixed(0)}, after warm-up ${rss.marks.warm.toFixed(0)}, end ${rss.marks.end.toFixed(0)}, peak ${rss.peakMb.toFixed(0)}`,
    );
    return {
      case: 'tokens',
      rps: done.rps,
      p50: done.p50,
      p99: done.p99,
      rssMb: { d: rss.peakMb },
      failed: done.failed,
      baseline: null,
      tokens: done.sent,
      rssStartMb: rss.marks.start,
      rssWarmMb: rss.marks.warm,
      rssEndMb: rss.marks.end,
      rssGrowthMb: growth,
      notes:
        `${done.sent} distinct tokens, ${done.failed} failed; RSS MB start ${rss.marks.start.toFixed(0)}, ` +
        `after ${warmAt} ${rss.marks.warm.toFixed(0)}, end ${rss.marks.end.toFixed(0)}, peak ${rss.peakMb.toFixed(0)} (growth after warm-up ${growth.toFixed(0)})`,
    };
  } finally {
    sampler.stop();
    await stopAll([service]);
  }
};
