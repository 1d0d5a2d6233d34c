import { refusalCode, StatusError, type StatusCode, type TokenHeader } from '@chain/errors';
import { parseCredentials, type Scheme } from './bearer.js';
import type { VerifiedCaller } from './claims.js';
import type { IntrospectionRequest } from './introspection.js';
import { passThroughHeaders, pathPrefixMatcher } from './request-rules.js';
import type { SecurityConfig } from './security-config.js';
import type { createTokenBinding, Presentation, RequestFacts } from './token-binding.js';
import { HEADER_NAMES, TokenError } from './token-error.js';

export interface AuthInfo extends Pick<
  VerifiedCaller,
  'clientId' | 'userId' | 'scopes' | 'claims' | 'introspected' | 'binding'
> {
  scopeToken?: Pick<VerifiedCaller, 'clientId' | 'scopes'>;
  passThrough: Record<string, string>;
}

export type TokenVerifier = (token: string, request: AuthRequest) => Promise<VerifiedCaller>;

export interface AuthRequest extends RequestFacts, IntrospectionRequest {
  authorization: string | string[] | undefined;
  scopeToken: string | string[] | undefined;
  /** Undefined without a spec operation (ERR10007). */
  requiredScopes: readonly string[] | undefined;
  dpop?: string | string[];
  scopeTokenDpop?: string | string[];
}

/** Without `confirm` a bound token is refused. */
export type AuthorizerOptions = Partial<
  Pick<
    SecurityConfig,
    | 'enableExtractScopeToken'
    | 'skipVerifyScopeWithoutSpec'
    | 'skipPathPrefixes'
    | 'passThroughClaims'
    | 'actorPaths'
    | 'dpop'
  >
> & { enableVerifyScope: boolean; confirm?: ReturnType<typeof createTokenBinding> };

/** Metrics count a scope mismatch under its verified caller, as light-4j. */
const refusedCallers = new WeakMap<StatusError, AuthInfo>();

export function verifiedCallerOf(err: unknown): AuthInfo | undefined {
  return err instanceof StatusError ? refusedCallers.get(err) : undefined;
}

export function createAuthorizer(verify: TokenVerifier, options: AuthorizerOptions) {
  const {
    enableVerifyScope,
    enableExtractScopeToken = true,
    skipVerifyScopeWithoutSpec = false,
    skipPathPrefixes = [],
    passThroughClaims = {},
    actorPaths = [],
    confirm = () => Promise.reject(new TokenError('unbound', 'token binding is not checked here')),
  } = options;
  const dpopAlgorithms = options.dpop?.algorithms ?? [];
  const skipped = pathPrefixMatcher(skipPathPrefixes.map((prefix) => [prefix, true]));
  const actors = new Set(actorPaths.map((p) => p.trim().split(/\s+/).join(' ')));

  const refused = (err: unknown, which: TokenHeader, scheme: Scheme, verified?: VerifiedCaller) => {
    if (!(err instanceof TokenError)) return err;
    const dpopBound = verified?.binding?.jkt !== undefined;
    return new StatusError(refusalCode(which, err.code), [HEADER_NAMES[which]], {
      cause: err,
      challenge: { scheme, dpopBound, dpopAlgorithms },
    });
  };

  const check = async (presented: Presentation, which: TokenHeader, request: AuthRequest) => {
    let caller: VerifiedCaller | undefined;
    try {
      caller = await verify(presented.token, request);
      // Only a token with `cnf` or sent as DPoP: a plain bearer token costs no await.
      if (caller.binding !== undefined || presented.scheme === 'dpop') {
        await confirm(caller.binding, presented, request);
      }
      return caller;
    } catch (err) {
      throw refused(err, which, presented.scheme, caller);
    }
  };

  return async (request: AuthRequest): Promise<{ auth: AuthInfo; token: string } | undefined> => {
    const { authorization, scopeToken, requiredScopes, path } = request;
    if (path !== undefined && skipped(path)) return undefined;
    const presented = parseCredentials(authorization);
    if (presented === undefined) throw new StatusError('ERR10002');
    const { scheme, token } = presented;
    const main = await check({ ...presented, proof: request.dpop }, 'auth', request);
    const { clientId, userId, scopes, claims, introspected, binding } = main;
    const passThrough = passThroughHeaders(claims, passThroughClaims);
    const auth: AuthInfo = { clientId, userId, scopes, claims, passThrough };
    if (introspected) auth.introspected = true;
    if (binding) auth.binding = binding; // proven: a `cnf` that is not fails above
    if (actors.size > 0 && !actors.has(actChain(claims))) {
      throw new StatusError('ERR10067', ['actorPaths']);
    }
    if (!enableVerifyScope) return { auth, token };
    if (requiredScopes === undefined) {
      if (skipVerifyScopeWithoutSpec) return { auth, token };
      throw new StatusError('ERR10007', [path ?? '']);
    }

    let checked = { code: 'ERR10005' as StatusCode, held: scopes, scheme };
    if (scopeToken !== undefined && enableExtractScopeToken) {
      const presentedScope = parseCredentials(scopeToken);
      if (presentedScope === undefined) {
        const reason = 'X-Scope-Token is not Bearer <token> or DPoP <token>';
        throw refused(new TokenError('invalid', reason), 'scope', 'bearer');
      }
      const proof = request.scopeTokenDpop;
      const scoped = await check({ ...presentedScope, proof }, 'scope', request);
      auth.scopeToken = { clientId: scoped.clientId, scopes: scoped.scopes };
      checked = { code: 'ERR10006', held: scoped.scopes, scheme: presentedScope.scheme };
    }
    // light-4j's rule: no scope listed, or the token holds one.
    if (requiredScopes.length > 0 && !requiredScopes.some((s) => checked.held.includes(s))) {
      // Java's List.toString, as light-4j's descriptions print scopes: `[a, b]`.
      const args = [checked.held, requiredScopes].map((list) => `[${list.join(', ')}]`);
      const challenge = { scheme: checked.scheme, dpopAlgorithms, requiredScopes };
      const error = new StatusError(checked.code, args, { challenge });
      refusedCallers.set(error, auth);
      throw error;
    }
    return { auth, token };
  };
}

/** The `sub` of each nested `act`, nearest actor first, space-separated (RFC 8693 4.1). */
function actChain(claims: Record<string, unknown>): string {
  const subs: string[] = [];
  for (let act = claims.act; subs.length < 32 && act && typeof act === 'object';) {
    const { sub, act: next } = act as Record<string, unknown>;
    if (typeof sub !== 'string') break;
    subs.push(sub);
    act = next;
  }
  return subs.join(' ');
}
