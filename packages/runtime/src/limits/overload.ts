import { memoryUsage } from 'node:process';
import type { Logger } from 'pino';
import { StatusError } from '@chain/errors';
import type { Metrics } from '@chain/metrics';
import type { Stage } from '../exchange.js';
import type { LimitConfig } from './limit-config.js';

/** One sampler a process: the newest pipeline's (a reloaded one replaces the one before it,
 * whose requests in progress are past this stage), so reloads leave no timer behind. */
let sampler: NodeJS.Timeout | undefined;

/**
 * Fastify's under-pressure: every `sampleInterval` ms the event loop's delay and the memory are
 * sampled; past a bound, a request gets 503 ERR20015 with `Retry-After` before any token work.
 * A request that finds the sample itself late by more than the bound (the loop is stalled now)
 * is refused too. `maxInFlight`: past that many requests in progress, a new one is refused at
 * once (light-4j's first LimitHandler, without its queue). Mounted after the probes: `/health`
 * still answers. Off when no bound is set.
 */
export function overloadStage(
  config: LimitConfig['overload'],
  metrics: Metrics,
  logger: Logger,
): Stage | undefined {
  const { maxEventLoopDelay, maxHeapUsedBytes, maxRssBytes, maxInFlight } = config;
  const { retryAfter, sampleInterval } = config;
  if (!maxEventLoopDelay && !maxHeapUsedBytes && !maxRssBytes && !maxInFlight) return undefined;
  let due = performance.now() + sampleInterval;
  let pressure: string | undefined;
  const sample = () => {
    const now = performance.now();
    const delay = now - due;
    due = now + sampleInterval;
    const memory = maxHeapUsedBytes || maxRssBytes ? memoryUsage() : undefined;
    const was = pressure;
    pressure =
      maxEventLoopDelay && delay > maxEventLoopDelay
        ? `event loop ${Math.round(delay)} ms late (maxEventLoopDelay ${maxEventLoopDelay})`
        : maxHeapUsedBytes && memory!.heapUsed > maxHeapUsedBytes
          ? `heap used ${memory!.heapUsed} bytes (maxHeapUsedBytes ${maxHeapUsedBytes})`
          : maxRssBytes && memory!.rss > maxRssBytes
            ? `rss ${memory!.rss} bytes (maxRssBytes ${maxRssBytes})`
            : undefined;
    if (pressure && !was) logger.warn({ pressure }, `overloaded, shedding requests: ${pressure}`);
    if (!pressure && was) logger.info('no longer overloaded');
  };
  clearInterval(sampler);
  sampler = setInterval(sample, sampleInterval).unref();
  const headers = { 'Retry-After': String(retryAfter) };
  let inFlight = 0;
  const ended = () => void inFlight--;
  return (x) => {
    const late = maxEventLoopDelay && performance.now() - due > maxEventLoopDelay;
    if (pressure === undefined && !late && !(maxInFlight && inFlight >= maxInFlight)) {
      if (maxInFlight) {
        inFlight++;
        x.res.once('close', ended);
      }
      return;
    }
    metrics.refused('overload');
    throw new StatusError('ERR20015', [], { headers });
  };
}
