import { errorBody, type ErrorBody, type StatusCode } from './status.js';

/** A request failure with its HTTP meaning; rendered by one error renderer (never its `cause`). */
export class StatusError extends Error {
  override readonly name = 'StatusError';
  readonly body: ErrorBody;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: StatusCode,
    args: string[] = [],
    options: {
      cause?: unknown;
      headers?: Record<string, string>;
      requiredScopes?: readonly string[];
    } = {},
  ) {
    const body = errorBody(code, ...args);
    super(`${code} ${body.message}: ${body.description}`, { cause: options.cause });
    this.body = body;
    this.headers = { ...wwwAuthenticate(body, options.requiredScopes), ...options.headers };
  }

  get statusCode(): number {
    return this.body.statusCode;
  }
}

/** RFC 6750 section 3 challenge for 401 and 403 answers; none for other statuses. */
export function wwwAuthenticate(
  body: ErrorBody,
  requiredScopes: readonly string[] = [],
): Record<string, string> {
  if (body.statusCode === 401) {
    // A request that carried no credentials gets the bare challenge (RFC 6750 3.1).
    if (body.code === 'ERR10002') return { 'WWW-Authenticate': 'Bearer realm="api"' };
    return { 'WWW-Authenticate': errorChallenge('Bearer', 'invalid_token', body) };
  }
  if (body.statusCode === 403) {
    const scope = requiredScopes.length ? requiredScopes.join(' ') : undefined;
    return { 'WWW-Authenticate': errorChallenge('Bearer', 'insufficient_scope', body, scope) };
  }
  return {};
}

/** One challenge of `scheme` with its error; `scope` undefined: no scope attribute. */
export function errorChallenge(scheme: string, error: string, body: ErrorBody, scope?: string) {
  const description = body.description.replace(/["\\]/g, '');
  const scoped = scope === undefined ? '' : `, scope="${scope}"`;
  return `${scheme} realm="api", error="${error}", error_description="${description}"${scoped}`;
}

/** Any thrown value as a StatusError: unknown errors become ERR10010 with nothing leaked. */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  return new StatusError('ERR10010', [], { cause: err });
}
