import { createHash } from 'node:crypto';
import { StatusError } from '@chain/errors';
import { LRUCache } from 'lru-cache';
import { callerOf, type VerifiedCaller } from './claims';
import type { Clock } from './key-source';
import {
  RefusedIntrospectionClient,
  type IntrospectionClient,
  type IntrospectionSource,
} from './introspection-source';
import { MAX_TOKEN_LENGTH } from './jwt-verifier';
import type { SecurityConfig } from './security-config';
import { invalidToken, TokenError } from './token-error';

export interface IntrospectionRequest {
  swtClientId?: string | string[];
  swtClientSecret?: string | string[];
}

export function createIntrospectionVerifier(
  source: IntrospectionSource,
  swt: SecurityConfig['swt'],
  now: Clock,
) {
  const cache = new IntrospectionCache<VerifiedCaller | undefined>(
    swt.cacheMaxEntries,
    swt.cacheMaxAgeSeconds * 1000,
    now,
  );
  const ask = async (token: string, client: IntrospectionClient | undefined) => {
    let answer;
    try {
      answer = await source.introspect(token, client);
    } catch (err) {
      const code = err instanceof RefusedIntrospectionClient ? 'ERR10080' : 'ERR10079';
      throw new StatusError(code, [], { cause: err });
    }
    if (!answer.active) return undefined;
    const { claims } = answer;
    const exp =
      typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp : undefined;
    return { ...callerOf(claims), exp, introspected: true as const };
  };
  const lifeOf = (answer: VerifiedCaller | undefined) =>
    answer === undefined ? undefined : answer.exp === undefined ? Infinity : answer.exp * 1000;

  return async (token: string, request: IntrospectionRequest): Promise<VerifiedCaller> => {
    if (token.length > MAX_TOKEN_LENGTH) {
      throw invalidToken(`token longer than ${MAX_TOKEN_LENGTH} characters`);
    }
    const { swtClientId: clientId, swtClientSecret: clientSecret } = request;
    // Both headers, each sent once and not empty.
    const client =
      typeof clientId === 'string' && typeof clientSecret === 'string' && clientId && clientSecret
        ? { clientId, clientSecret }
        : undefined;
    const key = cacheKey(token, client);
    const answer = await cache.answer(key, () => ask(token, client), lifeOf);
    if (answer === undefined)
      throw new TokenError('inactive', 'token is not active (introspection)');
    return answer;
  };
}

// Header text cannot contain a NUL.
function cacheKey(token: string, client: IntrospectionClient | undefined): string {
  const hash = createHash('sha256');
  if (client) hash.update(`${client.clientId}\0${client.clientSecret}\0`);
  else hash.update('\0');
  return hash.update(token).digest('base64');
}

/**
 * The call in flight is shared, also with the cache off: lru-cache's own `fetch` would keep
 * values only with a positive TTL and never with `max` 0.
 */
export class IntrospectionCache<T> {
  private readonly kept?: LRUCache<string, { answer: T }>;
  private readonly pending = new Map<string, Promise<T>>();

  constructor(
    maxEntries: number,
    private readonly maxAgeMs: number,
    private readonly now: Clock,
  ) {
    if (maxEntries > 0 && maxAgeMs > 0) {
      this.kept = new LRUCache({ max: maxEntries, perf: { now }, ttlResolution: 0 });
    }
  }

  get size(): number {
    return this.kept?.size ?? 0;
  }

  answer(
    key: string,
    ask: () => Promise<T>,
    lifeOf: (answer: T) => number | undefined,
  ): Promise<T> {
    const hit = this.kept?.get(key);
    if (hit !== undefined) return Promise.resolve(hit.answer);
    const inFlight = this.pending.get(key);
    if (inFlight !== undefined) return inFlight;
    const startedAt = this.now();
    const call = ask().then(
      (answer) => {
        this.pending.delete(key);
        const life = lifeOf(answer);
        // lru-cache serves an entry while `now - start <= ttl`: not from `until` on.
        const ttl =
          life === undefined ? 0 : Math.min(life, startedAt + this.maxAgeMs) - this.now() - 1;
        if (this.kept && ttl > 0) this.kept.set(key, { answer }, { ttl });
        return answer;
      },
      (err: unknown) => {
        this.pending.delete(key);
        throw err;
      },
    );
    this.pending.set(key, call);
    return call;
  }
}
