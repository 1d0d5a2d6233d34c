import { configFile, mapOf, redisUrl, z, type Light4jKey } from '@chain/config';

const UNITS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `10/s`: `limit` requests in a window of `windowMs`, which starts at the key's first request. */
export interface Quota {
  limit: number;
  windowMs: number;
  /** As written, `10/s`: part of the shared counter's name. */
  text: string;
}

/** light-4j's `10/s 10000/d`: a request passes while it is within every quota. */
const quotas = z.string().transform((written, ctx) => {
  const out: Quota[] = [];
  for (const text of written.trim().split(/\s+/)) {
    const m = /^([1-9]\d{0,8})\/([smhd])$/.exec(text);
    if (!m) {
      ctx.addIssue({ code: 'custom', message: `"${text}" is not a rate: 10/s (s, m, h or d)` });
      return z.NEVER;
    }
    out.push({ limit: Number(m[1]), windowMs: UNITS[m[2] as keyof typeof UNITS], text });
  }
  return out;
});
const byPath = mapOf(quotas);
/** An address, client or user: its quotas, or its quotas by path prefix. */
const perKey = mapOf(z.union([quotas, byPath]));

const resolver = (what: string): Light4jKey => ({ note: `the key is ${what}` });
const LIGHT4J_KEYS: Record<string, Light4jKey> = {
  clientIdKeyResolver: resolver("the verified token's client_id"),
  userIdKeyResolver: resolver("the verified token's user_id"),
  addressKeyResolver: resolver("the connection's peer address"),
};

const bytes = z.number().int().min(0).default(0);

/** limit.yml: light-4j's limit module, and under-pressure's load shedding as `overload`. */
const limitShape = ({ warn }: { warn: (key: string, message: string) => void }) =>
  z
    .strictObject({
      enabled: z.boolean().default(false),
      concurrentRequest: z.number().int().min(1).optional(),
      queueSize: z.number().int().min(-1).optional(),
      errorCode: z.union([z.literal(429), z.literal(503)]).default(429),
      rateLimit: quotas.optional(),
      headersAlwaysSet: z.boolean().default(false),
      key: z.enum(['server', 'address', 'client', 'user']).default('server'),
      server: byPath.default({}),
      address: perKey.default({}),
      client: perKey.default({}),
      user: perKey.default({}),
      /** Counters kept in this process; a new key past it forgets the oldest. */
      maxKeys: z.number().int().min(1).default(100_000),
      redis: redisUrl().optional(),
      overload: z
        .strictObject({
          maxEventLoopDelay: z.number().min(0).default(0),
          maxHeapUsedBytes: bytes,
          maxRssBytes: bytes,
          maxInFlight: z.number().int().min(0).default(0),
          retryAfter: z.number().int().min(1).default(10),
          sampleInterval: z.number().int().min(10).max(60_000).default(1000),
        })
        .prefault({}),
    })
    .transform(({ concurrentRequest, queueSize, rateLimit, ...cfg }) => {
      if (queueSize !== undefined) warn('queueSize', 'ignored: over a limit is refused at once');
      if (concurrentRequest !== undefined && rateLimit !== undefined) {
        warn('concurrentRequest', 'ignored: rateLimit is set');
      }
      // light-4j: concurrentRequest alone is the old way of writing `N/s`.
      const fallback = concurrentRequest ? `${concurrentRequest}/s` : '10/s 10000/d';
      return { ...cfg, rateLimit: rateLimit ?? quotas.parse(fallback) };
    });

export type LimitConfig = z.output<ReturnType<typeof limitShape>>;

export const limitConfigSchema = configFile(limitShape, { light4j: LIGHT4J_KEYS });
