import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';

/**
 * The credentials a service with security on sends downstream (light-4j's chain): the caller's
 * `Authorization` unchanged plus `X-Scope-Token: Bearer <own token>`; its own token in
 * `Authorization` when the caller sent none.
 */
export function credentialHeaders(
  callerAuthorization: string | undefined,
  ownToken: string,
  dpopProof?: string,
): Record<string, string> {
  return addCredentialHeaders({}, callerAuthorization, ownToken, dpopProof);
}

/**
 * `credentialHeaders` set on `headers` (the headers of a call being made), which it returns.
 * With `dpopProof` the own token is DPoP-bound and goes with its proof: in `Authorization` as
 * RFC 9449 7.1 says (`Authorization: DPoP <token>`, `DPoP: <proof>`), as X-Scope-Token as
 * `boundScopeToken` says. A certificate-bound token (RFC 8705) goes as a Bearer token: its proof
 * is the connection's certificate.
 */
export function addCredentialHeaders(
  headers: Record<string, string>,
  callerAuthorization: string | undefined,
  ownToken: string,
  dpopProof?: string,
): Record<string, string> {
  if (callerAuthorization) {
    headers.Authorization = callerAuthorization;
    if (dpopProof === undefined) headers['X-Scope-Token'] = `Bearer ${ownToken}`;
    else boundScopeToken(headers, ownToken, dpopProof);
  } else if (dpopProof === undefined) {
    headers.Authorization = `Bearer ${ownToken}`;
  } else {
    headers.Authorization = `DPoP ${ownToken}`;
    headers.DPoP = dpopProof;
  }
  return headers;
}

/**
 * The caller's `Authorization` as it goes on down the chain: a Bearer token without `cnf` only.
 * A bound caller token (the DPoP scheme, or `cnf` in its verified claims) is the caller's to
 * prove, with its certificate or key, which a hop does not hold: the next hop would refuse it, so
 * it stops here and the hop's own token goes in `Authorization` instead (undefined: none to pass
 * on). Without verified claims (verification off) a Bearer token goes on as it is.
 */
export function forwardedAuthorization(
  header: string | undefined,
  claims?: { cnf?: unknown },
): string | undefined {
  if (!header || /^\s*dpop\s/i.test(header)) return undefined;
  return claims?.cnf === undefined ? header : undefined;
}

/**
 * A DPoP-bound own token as X-Scope-Token, beside the caller's `Authorization`: the scheme is
 * the token's type and the proof has a header of its own, since `DPoP` belongs to the token in
 * `Authorization` when that one is DPoP-bound.
 */
export function boundScopeToken(
  headers: Record<string, string>,
  ownToken: string,
  dpopProof: string,
): void {
  headers['X-Scope-Token'] = `DPoP ${ownToken}`;
  headers['X-Scope-Token-DPoP'] = dpopProof;
}

/**
 * What a log line may say about the credentials of a request: per bearer token its client_id,
 * user_id and a short SHA-256 fingerprint (enough to tell two tokens apart), never the token.
 * The claims are read, not verified: this is for tracing only.
 */
export function credentialSummary(headers: {
  authorization?: string | string[];
  'x-scope-token'?: string | string[];
}): { authorization?: TokenSummary; scopeToken?: TokenSummary } {
  const summary: { authorization?: TokenSummary; scopeToken?: TokenSummary } = {};
  const auth = summarize(headers.authorization);
  const scope = summarize(headers['x-scope-token']);
  if (auth) summary.authorization = auth;
  if (scope) summary.scopeToken = scope;
  return summary;
}

export interface TokenSummary {
  fingerprint: string;
  client_id?: string;
  user_id?: string;
}

function summarize(header: string | string[] | undefined): TokenSummary | undefined {
  if (typeof header !== 'string') return undefined;
  const token = header.replace(/^\s*(bearer|dpop)\s+/i, '').trim();
  const summary: TokenSummary = { fingerprint: tokenFingerprint(token) };
  try {
    const { client_id, user_id } = decodeJwt(token);
    if (typeof client_id === 'string') summary.client_id = client_id;
    if (typeof user_id === 'string') summary.user_id = user_id;
  } catch {
    // not a JWT: the fingerprint alone
  }
  return summary;
}

/** The first 16 hex digits of the token's SHA-256. */
export function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}

/**
 * The trace of the request a call is made for (the runtime's request trace): the W3C Trace
 * Context headers of a new child span of it, for a token request made on its behalf.
 */
export interface OutgoingTrace {
  childHeaders(): Record<string, string>;
}
