const WHAT = {
  unauthorized: 'the token server refused the client credentials',
  invalid_grant: 'the token server refused the code or refresh token (wrong, used or expired)',
  rejected: 'the token server refused the token request',
  bad_response: 'the token server answered something that is not a token',
  timeout: 'the token server did not answer in time',
  unreachable: 'the token server could not be reached',
  retry_later: 'the last renewal failed; waiting for the retry delay',
};

export type TokenFetchErrorCode = keyof typeof WHAT;

export interface TokenFetchErrorDetails {
  clientId: string;
  url?: string;
  status?: number;
  oauthError?: string;
  cause?: unknown;
}

/** With its cause (the transport's failure, or the server's error answer), never the request. */
export class TokenFetchError extends Error {
  override readonly name = 'TokenFetchError';
  readonly clientId!: string;
  readonly url?: string;
  readonly status?: number;
  readonly oauthError?: string;

  constructor(
    readonly code: TokenFetchErrorCode,
    { cause, ...details }: TokenFetchErrorDetails,
  ) {
    super(describe(code, details), { cause });
    Object.assign(this, details);
  }
}

function describe(code: TokenFetchErrorCode, d: TokenFetchErrorDetails): string {
  const at = d.url ? ` from ${d.url}` : '';
  const answer = d.status ? ` (HTTP ${d.status}${d.oauthError ? ` ${d.oauthError}` : ''})` : '';
  return `Token for client ${d.clientId}${at}: ${WHAT[code]}${answer}`;
}
