/**
 * Why a token could not be had. A `switch` on `code` narrows it:
 * - `unauthorized`: the token server refused the client (wrong secret, unknown client: 401)
 * - `invalid_grant`: the code or refresh token was refused (wrong, used, expired, another
 *   client's or another redirect URI's): the user must sign in again
 * - `rejected`: any other error answer (bad scope, bad request, server error)
 * - `bad_response`: a 2xx answer that is not a token (not JSON, no access_token, no lifetime)
 * - `timeout`: no answer within the time-out
 * - `unreachable`: refused, reset, DNS or TLS failure
 * - `retry_later`: a renewal failed a moment ago; the next try waits for the retry delay
 */
export type TokenFetchErrorCode =
  | 'unauthorized'
  | 'invalid_grant'
  | 'rejected'
  | 'bad_response'
  | 'timeout'
  | 'unreachable'
  | 'retry_later';

export interface TokenFetchErrorDetails {
  clientId: string;
  /** Token endpoint URL (never carries credentials). */
  url?: string;
  /** HTTP status of the token server's answer, when there was one. */
  status?: number;
  /** The OAuth 2.0 `error` of the answer (`invalid_client`, `invalid_scope`, …). */
  oauthError?: string;
  cause?: unknown;
}

/**
 * A failure to obtain a token. It keeps its cause (a Node network error, or the token server's
 * error answer) but never the request: the message and the cause carry no secret and no token.
 */
export class TokenFetchError extends Error {
  override readonly name = 'TokenFetchError';
  readonly clientId: string;
  readonly url?: string;
  readonly status?: number;
  readonly oauthError?: string;

  constructor(
    readonly code: TokenFetchErrorCode,
    details: TokenFetchErrorDetails,
  ) {
    super(describe(code, details), { cause: details.cause });
    this.clientId = details.clientId;
    this.url = details.url;
    this.status = details.status;
    this.oauthError = details.oauthError;
  }
}

function describe(code: TokenFetchErrorCode, d: TokenFetchErrorDetails): string {
  const at = d.url ? ` from ${d.url}` : '';
  const answer = d.status ? ` (HTTP ${d.status}${d.oauthError ? ` ${d.oauthError}` : ''})` : '';
  const what: Record<TokenFetchErrorCode, string> = {
    unauthorized: 'the token server refused the client credentials',
    invalid_grant: 'the token server refused the code or refresh token (wrong, used or expired)',
    rejected: 'the token server refused the token request',
    bad_response: 'the token server answered something that is not a token',
    timeout: 'the token server did not answer in time',
    unreachable: 'the token server could not be reached',
    retry_later: 'the last renewal failed; waiting for the retry delay',
  };
  return `Token for client ${d.clientId}${at}: ${what[code]}${answer}`;
}
