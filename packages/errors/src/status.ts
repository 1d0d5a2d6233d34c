/**
 * Which rows are light-4j's and which ours: README. Descriptions never carry a token, a secret or
 * a stack trace: callers pass only names, paths, scopes and status codes.
 */
export interface ErrorBody {
  statusCode: number;
  code: string;
  message: string;
  description: string;
}

/** Why a token was refused: a `TokenError`'s code in `@chain/security`. */
export type TokenRefusal = 'invalid' | 'expired' | 'inactive' | 'unbound' | 'proof' | 'replayed';

/** `auth`: the token in `Authorization`; `scope`: the one in `X-Scope-Token`. */
export type TokenHeader = 'auth' | 'scope';

export interface StatusRow {
  statusCode: number;
  message: string;
  description: (...args: string[]) => string;
  /**
   * The error of its `WWW-Authenticate` challenge (RFC 6750 section 3, RFC 9449 section 7);
   * `bare`: a challenge without one (no credentials were sent). None: no challenge.
   */
  challenge?: 'bare' | 'invalid_token' | 'invalid_dpop_proof' | 'insufficient_scope';
  /** The token it refuses (`either`: the one whose proof failed), and for what. */
  refuses?: { token: TokenHeader | 'either'; reasons: readonly TokenRefusal[] };
  /**
   * A downstream's answer with it is a failure further down, passed on; `named`: when its
   * description is not ours, ours names the downstream (`beyond api-b`).
   */
  passOn?: 'named' | 'plain';
}

const fixed = (text: string) => () => text;

const ROWS = {
  ERR10000: {
    statusCode: 401,
    message: 'INVALID_AUTH_TOKEN',
    description: fixed('Incorrect signature or malformed token in authorization header'),
    challenge: 'invalid_token',
    refuses: { token: 'auth', reasons: ['invalid'] },
  },
  ERR10001: {
    statusCode: 401,
    message: 'AUTH_TOKEN_EXPIRED',
    description: fixed('Jwt token in authorization header expired'),
    challenge: 'invalid_token',
    refuses: { token: 'auth', reasons: ['expired'] },
  },
  ERR10002: {
    statusCode: 401,
    message: 'MISSING_AUTH_TOKEN',
    description: fixed('No Authorization header or the token is not bearer type'),
    challenge: 'bare',
  },
  ERR10003: {
    statusCode: 401,
    message: 'INVALID_SCOPE_TOKEN',
    description: fixed('Incorrect signature or malformed token in X-Scope-Token header'),
    challenge: 'invalid_token',
    refuses: { token: 'scope', reasons: ['invalid', 'inactive'] },
  },
  ERR10004: {
    statusCode: 401,
    message: 'SCOPE_TOKEN_EXPIRED',
    description: fixed('Jwt token in X-Scope-Token expired'),
    challenge: 'invalid_token',
    refuses: { token: 'scope', reasons: ['expired'] },
  },
  ERR10005: {
    statusCode: 403,
    message: 'AUTH_TOKEN_SCOPE_MISMATCH',
    description: (tokenScopes = '[]', specScopes = '[]') =>
      `Scopes ${tokenScopes} in authorization token and specification scopes ${specScopes} are not matched`,
    challenge: 'insufficient_scope',
  },
  ERR10006: {
    statusCode: 403,
    message: 'SCOPE_TOKEN_SCOPE_MISMATCH',
    description: (tokenScopes = '[]', specScopes = '[]') =>
      `Scopes ${tokenScopes} in scope token and specification scopes ${specScopes} are not matched`,
    challenge: 'insufficient_scope',
  },
  ERR10007: {
    statusCode: 404,
    message: 'INVALID_REQUEST_PATH',
    description: (path = '') => `Request path ${path} cannot be found in the spec.`,
  },
  ERR10008: {
    statusCode: 405,
    message: 'METHOD_NOT_ALLOWED',
    description: (method = '', path = '') =>
      `Request method ${method} cannot be found in the path ${path}.`,
  },
  ERR10009: {
    statusCode: 408,
    message: 'CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
    description: fixed('Could not get client credentials token in client module'),
    passOn: 'plain',
  },
  ERR10010: {
    statusCode: 500,
    message: 'RUNTIME_EXCEPTION',
    description: fixed('Unexpected runtime exception'),
  },
  ERR10067: {
    statusCode: 403,
    message: 'ACCESS_CONTROL_ERROR',
    description: (rule = '') => `Failed to pass the fine-grained authorization with rule ${rule}.`,
  },
  ERR10068: {
    statusCode: 413,
    message: 'PAYLOAD_TOO_LARGE',
    description: fixed('The request body has exceeded the set max size.'),
  },
  ERR10079: {
    statusCode: 503,
    message: 'OAUTH_INTROSPECTION_ERROR',
    description: fixed(
      'Unable to introspect the token: the introspection server could not be reached or gave no valid answer',
    ),
    passOn: 'plain',
  },
  ERR10080: {
    statusCode: 401,
    message: 'TOKEN_INFO_ERROR',
    description: fixed(
      'Token introspection error: the introspection server refused the client credentials sent with the request',
    ),
    challenge: 'invalid_token',
  },
  ERR10081: {
    statusCode: 401,
    message: 'INTROSPECTED_TOKEN_EXPIRED',
    description: fixed('Introspected token is not active: expired, revoked or unknown'),
    challenge: 'invalid_token',
    refuses: { token: 'auth', reasons: ['inactive'] },
  },
  ERR10088: {
    statusCode: 429,
    message: 'RATE_LIMIT_EXCEEDED',
    description: fixed('Rate limit exceeded.'),
  },
  ERR11004: {
    statusCode: 400,
    message: 'VALIDATOR_SCHEMA',
    description: (detail = '') => `Schema validation error: ${detail}`,
  },
  ERR20001: {
    statusCode: 404,
    message: 'RESOURCE_NOT_FOUND',
    description: (what = 'The resource') => `${what} cannot be found.`,
  },
  ERR20002: {
    statusCode: 502,
    message: 'DOWNSTREAM_UNAVAILABLE',
    description: (name = '') => `Downstream service ${name} could not be reached`,
    passOn: 'named',
  },
  ERR20003: {
    statusCode: 504,
    message: 'DOWNSTREAM_TIMEOUT',
    description: (name = '', ms = '') =>
      `Downstream service ${name} did not answer ${ms ? `within ${ms} ms` : 'in time'}`,
    passOn: 'named',
  },
  ERR20004: {
    statusCode: 502,
    message: 'DOWNSTREAM_BAD_RESPONSE',
    description: (name = '', what = 'an unexpected answer') =>
      `Downstream service ${name} answered ${what}`,
    passOn: 'named',
  },
  ERR20005: {
    statusCode: 503,
    message: 'KEY_SERVER_UNAVAILABLE',
    description: (kid = '') =>
      kid
        ? `The verification key for kid ${kid} could not be fetched from the key distribution server`
        : 'A verification key could not be fetched from the key distribution server',
    passOn: 'plain',
  },
  ERR20006: {
    statusCode: 503,
    message: 'SERVICE_STOPPING',
    description: fixed('The service is shutting down'),
  },
  ERR20007: {
    statusCode: 400,
    message: 'MALFORMED_REQUEST',
    description: (detail = 'The request cannot be parsed') => detail,
  },
  ERR20008: {
    statusCode: 431,
    message: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
    description: (limit = '') => `The request headers are larger than the limit of ${limit} bytes`,
  },
  ERR20009: {
    statusCode: 408,
    message: 'REQUEST_TIMEOUT',
    description: fixed('The request was not received in time'),
  },
  ERR20010: {
    statusCode: 417,
    message: 'EXPECTATION_FAILED',
    description: fixed('The expectation of the Expect header cannot be met'),
  },
  ERR20011: {
    statusCode: 503,
    message: 'DOWNSTREAM_CIRCUIT_OPEN',
    description: (name = '') =>
      `Downstream service ${name} is not called for now: it failed too often in a row`,
    passOn: 'named',
  },
  ERR20012: {
    statusCode: 401,
    message: 'TOKEN_BINDING_MISMATCH',
    description: (header = 'authorization') =>
      `Token in ${header} header is bound to a client certificate or DPoP key that the request does not prove`,
    challenge: 'invalid_token',
    refuses: { token: 'either', reasons: ['unbound'] },
  },
  ERR20013: {
    statusCode: 401,
    message: 'INVALID_DPOP_PROOF',
    description: (header = 'authorization') =>
      `DPoP proof of the token in ${header} header is missing or invalid`,
    challenge: 'invalid_dpop_proof',
    refuses: { token: 'either', reasons: ['proof'] },
  },
  ERR20014: {
    statusCode: 401,
    message: 'DPOP_PROOF_REPLAYED',
    description: (header = 'authorization') =>
      `DPoP proof of the token in ${header} header was already used`,
    challenge: 'invalid_dpop_proof',
    refuses: { token: 'either', reasons: ['replayed'] },
  },
  ERR20015: {
    statusCode: 503,
    message: 'SERVICE_OVERLOADED',
    description: (what = 'overloaded') => `The service is ${what}; retry later`,
  },
  ERR20016: {
    statusCode: 503,
    message: 'SHARED_STORE_UNAVAILABLE',
    description: (what = 'The shared store') => `${what} could not be reached`,
  },
  ERR20017: {
    statusCode: 404,
    message: 'ENDPOINT_NOT_ENABLED',
    description: (path = '', how = '') =>
      `Request path ${path} is served by this service but not enabled${how && `: ${how}`}`,
  },
  ERR20018: {
    statusCode: 400,
    message: 'CONFIG_RELOAD_REFUSED',
    description: (reason = '') => `The configuration in use stays, a file is refused: ${reason}`,
  },
} as const satisfies Record<string, StatusRow>;

export type StatusCode = keyof typeof ROWS;

export const STATUS: Readonly<Record<StatusCode, StatusRow>> = ROWS;

export function errorBody(code: StatusCode, ...args: string[]): ErrorBody {
  const { statusCode, message, description } = STATUS[code];
  return { statusCode, code, message, description: description(...args) };
}

export function isStatusCode(code: unknown): code is StatusCode {
  return typeof code === 'string' && Object.hasOwn(STATUS, code);
}

/** The code of a token in `header` refused for `reason`. */
export function refusalCode(header: TokenHeader, reason: TokenRefusal): StatusCode {
  const found = (Object.entries(STATUS) as [StatusCode, StatusRow][]).find(
    ([, { refuses }]) =>
      refuses?.reasons.includes(reason) && [header, 'either'].includes(refuses.token),
  );
  return found![0];
}
