import type tls from 'node:tls';
import type { Logger } from 'pino';
import { StatusError } from '@chain/errors';
import type { ReplayStore } from '@chain/security';
import type { Quota } from './limit-config.js';
import { verdict, type Counter, type Verdict } from './rate-limit.js';

/** Past it a command fails: a slow Redis must not hold requests. */
const COMMAND_TIMEOUT_MS = 500;

type Client = ReturnType<typeof import('@redis/client').createClient>;

/**
 * One connection per URL in a process, loaded only when a file names Redis; it starts connecting
 * when the pipeline is built, so an unreachable Redis is said at start, not at the first request.
 * Commands fail at once while it is down (no offline queue); it reconnects by itself. Said once
 * per outage. `rediss://` is TLS with client.yml's trust store and key store (`tls`), read when
 * the link opens: a Redis with a private CA, or one that asks for client certificates.
 */
const links = new Map<string, Promise<Client>>();
function redisLink(url: string, logger: Logger, tls: tls.ConnectionOptions): Promise<Client> {
  const secure = url.startsWith('rediss:');
  // Another trust store or key store (a reloaded client.yml) is another link.
  const id = secure ? `${url} ${JSON.stringify(tls)} ${!tls.checkServerIdentity}` : url;
  let link = links.get(id);
  if (link) return link;
  const host = URL.parse(url)?.host ?? 'redis';
  link = import('@redis/client').then(({ createClient }) => {
    let up: boolean | undefined;
    const client = createClient({
      url,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 2000,
        reconnectStrategy: (n) => Math.min(100 * 2 ** n, 2000),
        ...(secure && { tls: true, ...tls }),
      },
    });
    client.on('error', (err: Error) => {
      if (up === false) return;
      up = false;
      logger.warn(
        { redis: host, reason: err.message || String(err) },
        `Redis at ${host} cannot be reached: rate limits are not enforced, DPoP proofs are refused (ERR20016), until it answers`,
      );
    });
    client.on('ready', () => {
      if (up === false) logger.info({ redis: host }, `Redis at ${host} answers again`);
      up = true;
    });
    client.connect().catch(() => undefined);
    return client.withCommandOptions({ timeout: COMMAND_TIMEOUT_MS }) as unknown as Client;
  });
  links.set(id, link);
  return link;
}

// rate-limit.ts's GCRA on Redis's clock: every quota's arrival time moves, or none. Returns
// each quota's fill (ms), this request included.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS
local ok = true
local at = {}
for i = 1, n do
  local window = tonumber(ARGV[n + i])
  local tat = math.max(tonumber(redis.call('GET', KEYS[i]) or '0'), now)
  at[i] = tat + window / tonumber(ARGV[i])
  if at[i] - now > window then ok = false end
end
local out = {}
for i = 1, n do
  if ok then redis.call('SET', KEYS[i], at[i], 'PX', math.ceil(at[i] - now)) end
  out[i] = math.ceil(at[i] - now)
end
return out`;

const OPEN: Verdict = { ok: true, limit: 0, remaining: 0, resetMs: 0 };

/**
 * The counters of every process of `serviceId` that names this Redis (other services keep their
 * own); down, every request passes (open).
 */
export function redisCounter(
  url: string,
  serviceId: string,
  logger: Logger,
  tls: tls.ConnectionOptions,
): Counter {
  const link = redisLink(url, logger, tls);
  return async (key: string, quotas: readonly Quota[]) => {
    try {
      const client = await link;
      const keys = quotas.map((q) => `chain:limit:${serviceId}:{${key}}:${q.text}`);
      const args = [
        ...quotas.map((q) => String(q.limit)),
        ...quotas.map((q) => String(q.windowMs)),
      ];
      return verdict(quotas, (await client.eval(TAKE, { keys, arguments: args })) as number[]);
    } catch {
      return OPEN;
    }
  };
}

/** The DPoP replay cache of every process that names this Redis; down, proofs are refused. */
export function redisReplayStore(
  url: string,
  logger: Logger,
  tls: tls.ConnectionOptions,
): ReplayStore {
  const link = redisLink(url, logger, tls);
  return {
    async use(jti, expiresAt) {
      let set: string | null;
      try {
        const client = await link;
        const expiration = { type: 'PXAT', value: Math.ceil(expiresAt * 1000) } as const;
        set = await client.set(`chain:dpop:${jti}`, '1', { condition: 'NX', expiration });
      } catch (err) {
        throw new StatusError('ERR20016', ['The DPoP replay cache (Redis)'], { cause: err });
      }
      return set === null ? 'replayed' : 'fresh';
    },
  };
}
