import { createHash } from 'node:crypto';
import { StatusError } from '@chain/errors';
import type { VerifiedCaller } from './authorizer';
import { IntrospectionCache } from './introspection-cache';
import {
  RefusedIntrospectionClient,
  type IntrospectionClient,
  type IntrospectionSource,
} from './introspection-source';
import { MAX_TOKEN_LENGTH } from './jwt-verifier';
import { tokenScopes } from './scopes';
import { bindingOf } from './token-binding';
import { invalidToken, TokenError } from './token-error';

/** What an active answer tells, as the authorizer reads it, and until when it holds. */
export interface IntrospectedToken extends VerifiedCaller {
  /** The answer's `exp` (epoch seconds), when it had one. */
  exp?: number;
}

/** What of a request the verifier reads beside the token. */
export interface IntrospectionRequest {
  /** The values of security.yml `swtClientIdHeader` / `swtClientSecretHeader`, if sent. */
  swtClientId?: string | string[];
  swtClientSecret?: string | string[];
}

export interface IntrospectionVerifierOptions {
  source: IntrospectionSource;
  /** Active answers, and the calls in flight. */
  cache: IntrospectionCache<IntrospectedToken | undefined>;
}

export type IntrospectionVerifier = (
  token: string,
  request: IntrospectionRequest,
) => Promise<IntrospectedToken>;

/**
 * One opaque token, by introspection (RFC 7662; light-4j's simple web token): the answer of the
 * cache or the source, with the request's own introspection client when it sent both headers of
 * security.yml (light-4j's `swtClientIdHeader` / `swtClientSecretHeader`). Not active: a
 * TokenError `inactive`; active: the caller (`client_id`, `user_id`, the scopes of `scope`, the
 * binding of its `cnf`, which the authorizer has every request prove, cached or not, as for a
 * JWT: `token-binding.ts`). No answer: 503 ERR10079; the request's client refused: 401 ERR10080.
 * The cache is keyed by a digest of the token and the asking client, so it holds no token and a
 * request's own client is never served another client's answer.
 */
export function createIntrospectionVerifier(
  options: IntrospectionVerifierOptions,
): IntrospectionVerifier {
  const { source, cache } = options;
  const ask = async (token: string, client: IntrospectionClient | undefined) => {
    let answer;
    try {
      answer = await source.introspect(token, client);
    } catch (err) {
      const code = err instanceof RefusedIntrospectionClient ? 'ERR10080' : 'ERR10079';
      throw new StatusError(code, [], { cause: err });
    }
    return answer.active ? introspectedToken(answer.claims) : undefined;
  };
  const lifeOf = (answer: IntrospectedToken | undefined) =>
    answer === undefined ? undefined : answer.exp === undefined ? Infinity : answer.exp * 1000;

  return async (token, request) => {
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
 * An active answer as the caller: `client_id` and light-oauth2's `user_id` when they are
 * strings, the scopes of `scope` (space-separated, RFC 7662; a list is read too), `exp` when it
 * is a number, the binding of its `cnf` (RFC 8705 section 3.2 and RFC 9449 section 6.2 put it in
 * the answer as in a JWT) read once per answer, as a JWT's is once per verification.
 */
function introspectedToken(claims: Record<string, unknown>): IntrospectedToken {
  const { client_id: clientId, user_id: userId, exp } = claims;
  return {
    clientId: typeof clientId === 'string' ? clientId : undefined,
    userId: typeof userId === 'string' ? userId : undefined,
    scopes: tokenScopes(claims),
    claims,
    exp: typeof exp === 'number' && Number.isFinite(exp) ? exp : undefined,
    binding: bindingOf(claims),
    introspected: true,
  };
}
