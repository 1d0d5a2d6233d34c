import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';

/**
 * light-4j's chain: the caller's `Authorization` and the own token as `X-Scope-Token`, else the
 * own token in `Authorization`. A bound own token's proof beside the caller's token goes in
 * `X-Scope-Token-DPoP`: `DPoP` belongs to the token in `Authorization` (RFC 9449 7.1).
 */
export function credentialHeaders(
  callerAuthorization: string | undefined,
  ownToken: string,
  dpopProof?: string,
  headers: Record<string, string> = {},
): Record<string, string> {
  const own = `${dpopProof === undefined ? 'Bearer' : 'DPoP'} ${ownToken}`;
  if (callerAuthorization) {
    headers.Authorization = callerAuthorization;
    headers['X-Scope-Token'] = own;
    if (dpopProof !== undefined) headers['X-Scope-Token-DPoP'] = dpopProof;
  } else {
    headers.Authorization = own;
    if (dpopProof !== undefined) headers.DPoP = dpopProof;
  }
  return headers;
}

/** A bound token (the DPoP scheme, or `cnf`) is the caller's to prove, which a hop cannot. */
export function forwardedAuthorization(header: string | undefined, claims?: { cnf?: unknown }) {
  if (!header || /^\s*dpop\s/i.test(header)) return undefined;
  return claims?.cnf === undefined ? header : undefined;
}

/** What a log line may say of a request's tokens: claims read (not verified), a fingerprint. */
export function credentialSummary(headers: Record<string, string | string[] | undefined>) {
  const authorization = summarize(headers.authorization);
  const scopeToken = summarize(headers['x-scope-token']);
  return { ...(authorization && { authorization }), ...(scopeToken && { scopeToken }) };
}

export interface TokenSummary {
  fingerprint: string;
  client_id?: string;
  user_id?: string;
}

function summarize(header: string | string[] | undefined): TokenSummary | undefined {
  if (typeof header !== 'string') return undefined;
  const token = header.replace(/^\s*(bearer|dpop)\s+/i, '').trim();
  const fingerprint = createHash('sha256').update(token).digest('hex').slice(0, 16);
  const summary: TokenSummary = { fingerprint };
  try {
    const { client_id, user_id } = decodeJwt(token);
    if (typeof client_id === 'string') summary.client_id = client_id;
    if (typeof user_id === 'string') summary.user_id = user_id;
  } catch {
    // not a JWT
  }
  return summary;
}

export interface OutgoingTrace {
  childHeaders(): Record<string, string>;
}
