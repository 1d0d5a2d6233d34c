import { parseBearer } from './bearer';
import type { JwtClaims } from './claims';
import type { IntrospectionRequest } from './introspection';
import { isSkippedPath, passThroughHeaders } from './request-rules';
import { formatScopes, hasAnyScope } from './scopes';
import { StatusError } from '@chain/errors';
import type { StatusCode } from '@chain/errors';
import { REFUSAL_CODES, TokenError } from './token-error';

/** The verified caller, as the handler and metrics see it (the request context's `caller`). */
export interface AuthInfo {
  clientId?: string;
  userId?: string;
  scopes: string[];
  claims: JwtClaims;
  /** The X-Scope-Token's caller and scopes, when the request carried one. */
  scopeToken?: { clientId?: string; scopes: string[] };
  /** security.yml `passThroughClaims`: header -> value, for the handler and the downstream. */
  passThrough: Record<string, string>;
  /** The token was opaque, verified by introspection (security.yml `enableVerifySwt`). */
  introspected?: true;
}

/** What verifying one token tells: a JWT's claims, or an introspection answer's members. */
export interface VerifiedCaller {
  clientId?: string;
  userId?: string;
  scopes: string[];
  claims: JwtClaims;
  /** Told by introspection, not by a JWT's signature. */
  introspected?: true;
}

/** Verifies one token of a request (a JWT, or an opaque token by introspection). */
export type TokenVerifier = (token: string, request: AuthRequest) => Promise<VerifiedCaller>;

export interface AuthRequest extends IntrospectionRequest {
  authorization: string | string[] | undefined;
  scopeToken: string | string[] | undefined;
  /**
   * Scopes of the matched operation (empty: none required). Undefined when the request has no
   * operation in a spec: refused with ERR10007 unless `skipVerifyScopeWithoutSpec`.
   */
  requiredScopes: readonly string[] | undefined;
  /** The request path, for `skipPathPrefixes`. */
  path?: string;
}

export interface Authorized {
  auth: AuthInfo;
  /** The bearer token of the Authorization header (for the audit log only). */
  token: string;
}

/** Resolves undefined for a path of `skipPathPrefixes`: not verified at all. */
export type Authorizer = (request: AuthRequest) => Promise<Authorized | undefined>;

/** The request rules of security.yml, beyond the token itself (light-4j's keys). */
export interface AuthorizerOptions {
  enableVerifyScope: boolean;
  /** Verify X-Scope-Token and match its scopes (default true); false: the main token's scopes only. */
  enableExtractScopeToken?: boolean;
  /** A request without a spec operation skips the scope check instead of ERR10007. */
  skipVerifyScopeWithoutSpec?: boolean;
  /** Paths (whole segments) that skip verification. */
  skipPathPrefixes?: readonly string[];
  /** claim -> header name. */
  passThroughClaims?: Readonly<Record<string, string>>;
}

/**
 * The verified caller behind a scope mismatch (ERR10005/ERR10006): the token itself was good,
 * so metrics can count the 403 under its client, as light-4j does.
 */
const refusedCallers = new WeakMap<StatusError, AuthInfo>();

export function verifiedCallerOf(err: unknown): AuthInfo | undefined {
  return err instanceof StatusError ? refusedCallers.get(err) : undefined;
}

/**
 * One request: a path of `skipPathPrefixes` is not verified; otherwise the bearer token
 * (ERR10002), its verification (ERR10000/ERR10001; an opaque token not active ERR10081), and
 * with scope verification the X-Scope-Token (ERR10003/ERR10004, unless
 * `enableExtractScopeToken` is false) and the scope
 * match against the operation (ERR10006 for the scope token, else ERR10005; no operation:
 * ERR10007 unless `skipVerifyScopeWithoutSpec`). The verified claims of `passThroughClaims`
 * become headers.
 */
export function createAuthorizer(verify: TokenVerifier, options: AuthorizerOptions): Authorizer {
  const {
    enableVerifyScope,
    enableExtractScopeToken = true,
    skipVerifyScopeWithoutSpec = false,
    skipPathPrefixes = [],
    passThroughClaims = {},
  } = options;
  const check = async (token: string, which: 'auth' | 'scope', request: AuthRequest) => {
    try {
      return await verify(token, request);
    } catch (err) {
      if (err instanceof TokenError) {
        throw new StatusError(REFUSAL_CODES[which][err.kind], [], { cause: err });
      }
      throw err;
    }
  };

  return async (request) => {
    const { authorization, scopeToken, requiredScopes, path } = request;
    if (path !== undefined && isSkippedPath(path, skipPathPrefixes)) return undefined;
    const token = parseBearer(authorization);
    if (token === undefined) throw new StatusError('ERR10002');
    const main = await check(token, 'auth', request);
    const auth: AuthInfo = {
      clientId: main.clientId,
      userId: main.userId,
      scopes: main.scopes,
      claims: main.claims,
      passThrough: passThroughHeaders(main.claims, passThroughClaims),
    };
    if (main.introspected) auth.introspected = true;
    if (!enableVerifyScope) return { auth, token };
    if (requiredScopes === undefined) {
      if (skipVerifyScopeWithoutSpec) return { auth, token };
      throw new StatusError('ERR10007', [path ?? '']);
    }

    if (scopeToken !== undefined && enableExtractScopeToken) {
      const scopeJwt = parseBearer(scopeToken);
      if (scopeJwt === undefined) {
        throw new StatusError('ERR10003', [], {
          cause: new TokenError('invalid', 'X-Scope-Token is not Bearer <token>'),
        });
      }
      const scoped = await check(scopeJwt, 'scope', request);
      auth.scopeToken = { clientId: scoped.clientId, scopes: scoped.scopes };
      if (!hasAnyScope(scoped.scopes, requiredScopes)) {
        throw mismatch('ERR10006', scoped.scopes, requiredScopes, auth);
      }
    } else if (!hasAnyScope(main.scopes, requiredScopes)) {
      throw mismatch('ERR10005', main.scopes, requiredScopes, auth);
    }
    return { auth, token };
  };
}

function mismatch(
  code: StatusCode,
  held: readonly string[],
  required: readonly string[],
  caller: AuthInfo,
) {
  const error = new StatusError(code, [formatScopes(held), formatScopes(required)], {
    requiredScopes: required,
  });
  refusedCallers.set(error, caller);
  return error;
}
