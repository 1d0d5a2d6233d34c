import type { AuthInfo } from './authorizer';

/** The one method of a pino logger the audit needs. */
export interface AuditLogger {
  info(record: object, message: string): void;
}

export interface AuditOptions {
  logJwtToken: boolean;
  logClientUserScope: boolean;
}

/**
 * The audit record of a verified request (light-4j's AuditHandler): the whole JWT with
 * `logJwtToken` (never an opaque token: it tells nothing to the reader and stays valid until
 * revoked), client_id, user_id and scope with `logClientUserScope`, nothing when both are off.
 * Only called for verified tokens: a refused token is never logged whole.
 */
export function auditRecord(
  options: AuditOptions,
  token: string,
  auth: AuthInfo,
): Record<string, unknown> | undefined {
  if (!options.logJwtToken && !options.logClientUserScope) return undefined;
  const record: Record<string, unknown> = {};
  if (options.logJwtToken && !auth.introspected) record.jwt = token;
  if (options.logClientUserScope) {
    record.client_id = auth.clientId;
    record.user_id = auth.userId;
    record.scope = auth.scopes.join(' ');
  }
  return record;
}
