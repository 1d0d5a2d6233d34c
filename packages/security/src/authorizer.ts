import { parseBearer, parseDpop } from './bearer';
import { bindingChallenge, type Scheme } from './challenge';
import type { JwtClaims } from './claims';
import type { IntrospectionRequest } from './introspection';
import { isSkippedPath, passThroughHeaders } from './request-rules';
import { formatScopes, hasAnyScope } from './scopes';
import { errorBody, StatusError } from '@chain/errors';
import type { StatusCode } from '@chain/errors';
import type { Binding, RequestFacts, TokenBindingCheck } from './token-binding';
import { HEADER_NAMES, REFUSAL_CODES, TokenError, type TokenHeader } from './token-error';

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
  /**
   * What its `cnf` binds it to (`bindingOf`, the same for a JWT and an introspection answer),
   * proven by every request, cached or not. Undefined for a token without `cnf`.
   */
  binding?: Binding;
  /** Told by introspection, not by a JWT's signature. */
  introspected?: true;
}

/** Verifies one token of a request (a JWT, or an opaque token by introspection). */
export type TokenVerifier = (token: string, request: AuthRequest) => Promise<VerifiedCaller>;

export interface AuthRequest extends RequestFacts, IntrospectionRequest {
  authorization: string | string[] | undefined;
  scopeToken: string | string[] | undefined;
  /**
   * Scopes of the matched operation (empty: none required). Undefined when the request has no
   * operation in a spec: refused with ERR10007 unless `skipVerifyScopeWithoutSpec`.
   */
  requiredScopes: readonly string[] | undefined;
  /** The request path, for `skipPathPrefixes` (and a DPoP proof's `htu`). */
  path?: string;
  /** The `DPoP` header: the proof of a token in Authorization with the DPoP scheme. */
  dpop?: string | string[];
  /** The `X-Scope-Token-DPoP` header: the proof of a token in X-Scope-Token with the DPoP scheme. */
  scopeTokenDpop?: string | string[];
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
  /** The binding check of a token with a `cnf` or the DPoP scheme; without it, such a token is refused. */
  confirm?: TokenBindingCheck;
  /** security.yml `dpop.algorithms`, for the `algs` of a DPoP challenge. */
  dpopAlgorithms?: readonly string[];
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
 * One request: a path of `skipPathPrefixes` is not verified; otherwise the token of
 * Authorization, `Bearer` or `DPoP` (ERR10002), its verification (a JWT: ERR10000/ERR10001; an
 * opaque token by introspection: not active ERR10081) and the proof of its binding
 * (ERR20012-ERR20014, `token-binding.ts`, for a token with a `cnf`, JWT or introspected, or sent
 * with the DPoP scheme, cached or not), and with scope verification the X-Scope-Token, the same
 * way (ERR10003/ERR10004, ERR20012-ERR20014, unless `enableExtractScopeToken` is false) and the
 * scope match against the operation (ERR10006 for the scope token, else ERR10005; no operation:
 * ERR10007 unless `skipVerifyScopeWithoutSpec`). The verified claims of `passThroughClaims`
 * become headers. A refusal of a token sent with the DPoP scheme, or of a DPoP-bound one sent as
 * Bearer, carries the DPoP challenge (`challenge.ts`).
 */
export function createAuthorizer(verify: TokenVerifier, options: AuthorizerOptions): Authorizer {
  const {
    enableVerifyScope,
    enableExtractScopeToken = true,
    skipVerifyScopeWithoutSpec = false,
    skipPathPrefixes = [],
    passThroughClaims = {},
    confirm,
    dpopAlgorithms = [],
  } = options;

  const refusal = (
    code: StatusCode,
    which: TokenHeader,
    scheme: Scheme,
    extra: { cause?: unknown; dpopBound?: boolean; requiredScopes?: readonly string[] },
    args: string[] = [HEADER_NAMES[which]],
  ) =>
    new StatusError(code, args, {
      cause: extra.cause,
      requiredScopes: extra.requiredScopes,
      headers: bindingChallenge(scheme, errorBody(code, ...args), dpopAlgorithms, extra),
    });

  /** A TokenError as the catalogue code of its header, with the challenge of its scheme. */
  const refused = (err: unknown, which: TokenHeader, scheme: Scheme, verified?: VerifiedCaller) => {
    if (!(err instanceof TokenError)) return err;
    const dpopBound = verified?.binding?.jkt !== undefined;
    return refusal(REFUSAL_CODES[which][err.kind], which, scheme, { cause: err, dpopBound });
  };

  /**
   * That the request proves the binding of a verified token with a `cnf` or sent with the DPoP
   * scheme. Called only for such a token: a bearer token without `cnf` costs no call and no await
   * (its verification is awaited in the request's own function, as before binding existed).
   */
  const prove = async (
    verified: VerifiedCaller,
    token: string,
    which: TokenHeader,
    scheme: Scheme,
    proof: string | string[] | undefined,
    request: AuthRequest,
  ): Promise<void> => {
    try {
      if (!confirm) throw new TokenError('unbound', 'token binding is not checked here');
      await confirm(verified.binding, { scheme, token, proof }, request);
    } catch (err) {
      throw refused(err, which, scheme, verified);
    }
  };

  return async (request) => {
    const { authorization, scopeToken, requiredScopes, path } = request;
    if (path !== undefined && isSkippedPath(path, skipPathPrefixes)) return undefined;
    let scheme: Scheme = 'bearer';
    let token = parseBearer(authorization);
    if (token === undefined) {
      scheme = 'dpop';
      token = parseDpop(authorization);
      if (token === undefined) throw new StatusError('ERR10002');
    }
    let main: VerifiedCaller;
    try {
      main = await verify(token, request);
    } catch (err) {
      throw refused(err, 'auth', scheme);
    }
    if (main.binding !== undefined || scheme === 'dpop') {
      await prove(main, token, 'auth', scheme, request.dpop, request);
    }
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
      let scopeScheme: Scheme = 'bearer';
      let scopeJwt = parseBearer(scopeToken);
      if (scopeJwt === undefined) {
        scopeScheme = 'dpop';
        scopeJwt = parseDpop(scopeToken);
      }
      if (scopeJwt === undefined) {
        throw new StatusError('ERR10003', [], {
          cause: new TokenError('invalid', 'X-Scope-Token is not Bearer <token> or DPoP <token>'),
        });
      }
      let scoped: VerifiedCaller;
      try {
        scoped = await verify(scopeJwt, request);
      } catch (err) {
        throw refused(err, 'scope', scopeScheme);
      }
      if (scoped.binding !== undefined || scopeScheme === 'dpop') {
        await prove(scoped, scopeJwt, 'scope', scopeScheme, request.scopeTokenDpop, request);
      }
      auth.scopeToken = { clientId: scoped.clientId, scopes: scoped.scopes };
      if (!hasAnyScope(scoped.scopes, requiredScopes)) {
        throw mismatch('ERR10006', scoped.scopes, requiredScopes, auth, scopeScheme);
      }
    } else if (!hasAnyScope(main.scopes, requiredScopes)) {
      throw mismatch('ERR10005', main.scopes, requiredScopes, auth, scheme);
    }
    return { auth, token };
  };

  function mismatch(
    code: StatusCode,
    held: readonly string[],
    required: readonly string[],
    caller: AuthInfo,
    scheme: Scheme,
  ) {
    const args = [formatScopes(held), formatScopes(required)];
    const error = refusal(code, 'auth', scheme, { requiredScopes: required }, args);
    refusedCallers.set(error, caller);
    return error;
  }
}
