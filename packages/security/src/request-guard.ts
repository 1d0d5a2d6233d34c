import { auditRecord } from './audit-log';
import { verifiedCallerOf, type AuthInfo, type AuthRequest } from './authorizer';
import { createSecurity, type SecurityOptions } from './create-security';
import type { MockTokenIssuer } from './mock-jwt';
import { StatusError } from '@chain/errors';
import { decodeJwt } from 'jose';
import { MAX_TOKEN_LENGTH } from './jwt-verifier';

/** The two methods of a pino logger the guard writes with. */
export interface GuardLogger {
  info(record: object, message: string): void;
  warn(record: object, message: string): void;
}

export interface RequestGuardOptions extends SecurityOptions {
  /** Receives the audit line of each verified request and one line per refused request. */
  logger?: GuardLogger;
  /**
   * Writes the audit line of a verified request (its fields; the message is `jwt verified`)
   * instead of `logger.info`: the runtime's writer of that one line, which costs a fraction of
   * a general log call and is on every request.
   */
  audit?: (fields: Record<string, unknown>) => void;
}

/**
 * What the guard reads of a request: the two credential headers (and their DPoP proofs), the
 * operation's scopes, what a token's binding is proven against (the connection's client
 * certificate, the method and URI), the introspection client an opaque token may bring, and what
 * to log it under.
 */
export interface GuardRequest extends AuthRequest {
  /** For the log lines only. */
  correlationId?: string;
  /** For the log lines only: the W3C trace-id of the request. */
  traceId?: string;
  /** For the log lines only: the peer address of the connection. */
  remoteAddress?: string;
}

export interface RequestGuard {
  /**
   * Verifies one request (README "Security"). Resolves with the verified caller, or undefined
   * for a path of `skipPathPrefixes` (not verified); rejects with the catalogue StatusError,
   * whose verified caller (a 403) `verifiedCallerOf` gives. Undefined when `enableVerifyJwt` and
   * `enableVerifySwt` are false: there is nothing to check.
   */
  check?: (request: GuardRequest) => Promise<AuthInfo | undefined>;
  /** The `enableMockJwt` token issuer. */
  mockIssuer?: MockTokenIssuer;
}

/**
 * The request-facing face of the security package, free of any HTTP framework: the runtime's
 * security stage hands it the headers and the operation's scopes. It writes the audit line of a
 * verified request, and one line per refused request (code, reason, correlation and trace ids,
 * client, peer), never the token and never a stack trace.
 */
export function createRequestGuard(options: RequestGuardOptions): RequestGuard {
  const { config, logger } = options;
  const { authorize, mockIssuer } = createSecurity(options);
  if (!authorize) return { mockIssuer };
  const audit =
    options.audit ??
    (logger ? (fields: Record<string, unknown>) => logger.info(fields, 'jwt verified') : undefined);

  const check = async (request: GuardRequest): Promise<AuthInfo | undefined> => {
    try {
      const authorized = await authorize(request);
      if (!authorized) return undefined; // skipPathPrefixes
      const { auth, token } = authorized;
      const record = audit && auditRecord(config, token, auth);
      if (record) {
        record.correlationId = request.correlationId;
        record.traceId = request.traceId;
        audit(record);
      }
      return auth;
    } catch (err) {
      if (logger) logRefusal(logger, request, err);
      throw err;
    }
  };
  return { check, mockIssuer };
}

/** One line per refusal; a failure that is not a refusal (ERR10010) is the renderer's to log. */
function logRefusal(logger: GuardLogger, request: GuardRequest, err: unknown): void {
  if (!(err instanceof StatusError) || err.code === 'ERR10010') return;
  const caller = verifiedCallerOf(err);
  const record: Record<string, unknown> = {
    code: err.code,
    reason: reasonOf(err, request),
    correlationId: request.correlationId,
    traceId: request.traceId,
    remoteAddress: request.remoteAddress,
  };
  if (caller) record.clientId = caller.clientId;
  else {
    const claimed = claimedClientId(request.authorization);
    if (claimed) record.claimedClientId = claimed;
  }
  const message =
    err.statusCode === 403
      ? 'scope refused'
      : err.statusCode === 401
        ? 'token refused'
        : 'token not checked';
  logger.warn(record, message);
}

function reasonOf(err: StatusError, request: GuardRequest): string {
  const cause = err.cause;
  if (cause instanceof Error && cause.message) return cause.message;
  if (err.code === 'ERR10002') {
    return request.authorization === undefined
      ? 'no Authorization header'
      : 'Authorization is not Bearer <token> or DPoP <token>';
  }
  return err.body.description;
}

const PRINTABLE_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The `client_id` a refused token claims (its signature did not verify, so it is only a claim):
 * it tells an operator which client is misconfigured. Only a short printable string is kept.
 */
function claimedClientId(authorization: string | string[] | undefined): string | undefined {
  if (typeof authorization !== 'string') return undefined;
  const token = authorization.trim().split(/\s+/)[1];
  if (!token || token.length > MAX_TOKEN_LENGTH) return undefined;
  try {
    const id = decodeJwt(token).client_id;
    return typeof id === 'string' && PRINTABLE_ID.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}
