import { createHash } from 'node:crypto';
import { StatusError } from '@chain/errors';
import { BoundedMap } from './bounded-map.js';
import {
  callerOf,
  checkAudienceAndIssuer,
  type ClaimChecks,
  type VerifiedCaller,
} from './claims.js';
import type { Clock } from './key-source.js';
import { MAX_TOKEN_LENGTH } from './jwt-verifier.js';
import type { SecurityConfig } from './security-config.js';
import { invalidToken, TokenError } from './token-error.js';

export type Introspected = { active: true; claims: Record<string, unknown> } | { active: false };

export interface IntrospectionClient {
  clientId: string;
  clientSecret: string;
}

/** Rejects when there is no answer (ERR10079), with RefusedIntrospectionClient for ERR10080. */
export interface IntrospectionSource {
  introspect(token: string, client?: IntrospectionClient): Promise<Introspected>;
}

/** The server refused the request's own client (401 `invalid_client`); no credential in the message. */
export class RefusedIntrospectionClient extends Error {
  override readonly name = 'RefusedIntrospectionClient';
}

export interface IntrospectionRequest {
  swtClientId?: string | string[];
  swtClientSecret?: string | string[];
}

/** RFC 6750 and RFC 9449 access tokens; RFC 6749 section 7.1: the type is case-insensitive. */
const ACCESS_TOKEN_TYPES = new Set(['bearer', 'dpop']);

export function createIntrospectionVerifier(
  source: IntrospectionSource,
  swt: SecurityConfig['swt'],
  now: Clock,
  checks: ClaimChecks = {},
) {
  const cache = new IntrospectionCache<VerifiedCaller | string>(
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
    if (!answer.active) return 'token is not active (introspection)';
    const { claims } = answer;
    // A refresh token is active too (RFC 7662 introspects every kind), and is for the token
    // server only.
    const type = claims.token_type;
    if (type === undefined) {
      if (swt.requireTokenType) return 'introspection answer names no token_type';
    } else if (typeof type !== 'string' || !ACCESS_TOKEN_TYPES.has(type.toLowerCase())) {
      return 'introspection answer is not for an access token (token_type)';
    }
    const problem = checkAudienceAndIssuer(claims, checks);
    if (problem) return problem;
    const exp = Number.isFinite(claims.exp) ? (claims.exp as number) : undefined;
    return { ...callerOf(claims), exp, introspected: true as const };
  };
  // A refusal is not kept: a token not valid yet (`nbf`) may become active.
  const lifeOf = (answer: VerifiedCaller | string) =>
    typeof answer === 'string' ? undefined : (answer.exp ?? Infinity) * 1000;

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
    // Header text cannot contain a NUL.
    const prefix = client ? `${client.clientId}\0${client.clientSecret}\0` : '\0';
    const key = createHash('sha256').update(prefix).update(token).digest('base64');
    const answer = await cache.answer(key, () => ask(token, client), lifeOf);
    if (typeof answer === 'string') throw new TokenError('inactive', answer);
    return answer;
  };
}

/** The least recently used answer out first; the call in flight is shared, also with the cache off. */
export class IntrospectionCache<T> {
  private readonly kept?: BoundedMap<string, { answer: T; until: number }>;
  private readonly pending = new Map<string, Promise<T>>();

  constructor(
    maxEntries: number,
    private readonly maxAgeMs: number,
    private readonly now: Clock,
  ) {
    if (maxEntries > 0 && maxAgeMs > 0) this.kept = new BoundedMap(maxEntries);
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
    if (hit !== undefined && hit.until > this.now()) {
      this.kept!.set(key, hit); // now the most recently used
      return Promise.resolve(hit.answer);
    }
    if (hit !== undefined) this.kept!.delete(key);
    const inFlight = this.pending.get(key);
    if (inFlight !== undefined) return inFlight;
    const startedAt = this.now();
    const call = ask()
      .then((answer) => {
        const life = lifeOf(answer);
        const until = life === undefined ? 0 : Math.min(life, startedAt + this.maxAgeMs);
        // Not an answer whose life ends within this millisecond.
        if (this.kept && until - this.now() > 1) this.kept.set(key, { answer, until });
        return answer;
      })
      .finally(() => this.pending.delete(key));
    this.pending.set(key, call);
    return call;
  }
}
