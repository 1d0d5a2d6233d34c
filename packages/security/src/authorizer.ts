import { parseBearer } from './bearer';
import type { JwtVerifier, VerifiedToken } from './jwt-verifier';
import { formatScopes, hasAnyScope } from './scopes';
import { StatusError } from './status-error';
import type { StatusCode } from './status';
import { TokenError } from './token-error';

/** The verified caller, as the handler and metrics see it (`res.locals.auth`). */
export interface AuthInfo {
  clientId?: string;
  userId?: string;
  scopes: string[];
  claims: VerifiedToken['claims'];
  /** The X-Scope-Token's caller and scopes, when the request carried one. */
  scopeToken?: { clientId?: string; scopes: string[] };
}

export interface AuthRequest {
  authorization: string | string[] | undefined;
  scopeToken: string | string[] | undefined;
  /** Scopes of the matched operation; none or empty means no scope is required. */
  requiredScopes: readonly string[] | undefined;
}

export interface Authorized {
  auth: AuthInfo;
  /** The bearer token of the Authorization header (for the audit log only). */
  token: string;
}

export type Authorizer = (request: AuthRequest) => Promise<Authorized>;

/**
 * The verified caller behind a scope mismatch (ERR10005/ERR10006): the token itself was good,
 * so metrics can count the 403 under its client, as light-4j does.
 */
const refusedCallers = new WeakMap<StatusError, AuthInfo>();

export function verifiedCallerOf(err: unknown): AuthInfo | undefined {
  return err instanceof StatusError ? refusedCallers.get(err) : undefined;
}

const CODES: Record<'auth' | 'scope', Record<TokenError['kind'], StatusCode>> = {
  auth: { invalid: 'ERR10000', expired: 'ERR10001' },
  scope: { invalid: 'ERR10003', expired: 'ERR10004' },
};

/**
 * The security checks of one request (README "Security", steps 1-5): the bearer token (ERR10002), its verification
 * (ERR10000/ERR10001), and with scope verification the X-Scope-Token (ERR10003/ERR10004) and the
 * scope match against the operation (ERR10006 for the scope token, else ERR10005).
 */
export function createAuthorizer(verify: JwtVerifier, enableVerifyScope: boolean): Authorizer {
  const check = async (token: string, which: 'auth' | 'scope') => {
    try {
      return await verify(token);
    } catch (err) {
      if (err instanceof TokenError) {
        throw new StatusError(CODES[which][err.kind], [], { cause: err });
      }
      throw err;
    }
  };

  return async ({ authorization, scopeToken, requiredScopes = [] }) => {
    const token = parseBearer(authorization);
    if (token === undefined) throw new StatusError('ERR10002');
    const main = await check(token, 'auth');
    const auth: AuthInfo = {
      clientId: main.clientId,
      userId: main.userId,
      scopes: main.scopes,
      claims: main.claims,
    };
    if (!enableVerifyScope) return { auth, token };

    if (scopeToken !== undefined) {
      const scopeJwt = parseBearer(scopeToken);
      if (scopeJwt === undefined) {
        throw new StatusError('ERR10003', [], {
          cause: new TokenError('invalid', 'X-Scope-Token is not Bearer <token>'),
        });
      }
      const scoped = await check(scopeJwt, 'scope');
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
