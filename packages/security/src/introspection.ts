import { createHash } from 'node:crypto';
import { StatusError } from '@chain/errors';
import { LRUCache } from 'lru-cache';
import { callerOf, type VerifiedCaller } from './claims';
import type { Clock } from './clock';
import {
  RefusedIntrospectionClient,
  type IntrospectionClient,
  type IntrospectionSource,
} from './introspection-source';
import { MAX_TOKEN_LENGTH } from './jwt-verifier';
import type { SecurityConfig } from './security-config';
import { invalidToken, TokenError } from './token-error';

/** An active answer as the authorizer reads it, with its `exp` (epoch seconds) when it had one. */
export interface IntrospectedToken extends VerifiedCaller {
  exp?: number;
}

/** The values of security.yml `swtClientIdHeader` / `swtClientSecretHeader`, if sent. */
export interface IntrospectionRequest {
  swtClientId?: string | string[];
  swtClientSecret?: string | string[];
}

/**
 * One opaque token by introspection (README "Opaque tokens"): not active, a TokenError
 * `inactive`; no answer, ERR10079; the request's own client refused, ERR10080.
 */
export function createIntrospectionVerifier(
  source: IntrospectionSource,
  swt: SecurityConfig['swt'],
  now: Clock,
) {
  const cache = new IntrospectionCache<IntrospectedToken | undefined>(
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
  const lifeOf = (answer: IntrospectedToken | undefined) =>
    answer === undefined ? undefined : answer.exp === undefined ? Infinity : answer.exp * 1000;

  return async (token: string, request: IntrospectionRequest): Promise<IntrospectedToken> => {
    if (token.length > MAX_TOKEN_LENGTH) {
      throw invalidToken(`token longer than ${MAX_TOKEN_LENGTH} characters`);
    }
    const client = requestClient(request);
    const key = cacheKey(token, client);
    const answer = await cache.answer(key, () => ask(token, client), lifeOf);
    if (answer === undefined)
      throw new TokenError('inactive', 'token is not active (introspection)');
    return answer;
  };
}

/** The request's own introspection client: both headers, each sent once and not empty. */
function requestClient(request: IntrospectionRequest): IntrospectionClient | undefined {
  const { swtClientId: clientId, swtClientSecret: clientSecret } = request;
  if (typeof clientId !== 'string' || typeof clientSecret !== 'string') return undefined;
  if (clientId === '' || clientSecret === '') return undefined;
  return { clientId, clientSecret };
}

/** SHA-256 of the asking client and the token (neither contains a NUL: header text cannot). */
function cacheKey(token: string, client: IntrospectionClient | undefined): string {
  const hash = createHash('sha256');
  if (client) hash.update(`${client.clientId}\0${client.clientSecret}\0`);
  else hash.update('\0');
  return hash.update(token).digest('base64');
}

/**
 * Answers by key, the call in flight shared (also with the cache off), kept while `lifeOf` says
 * and at most `maxAgeMs` after the call. lru-cache's own `fetch` would keep values only with a
 * positive TTL and never with `max` 0.
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
      // The service's clock (tests move it), read on every look-up.
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
