import { errorBody, isStatusCode, STATUS, type ErrorBody, type StatusCode } from './status.js';

/** How the refused token was presented, for its challenge (RFC 9449 section 7). */
export interface ChallengeOptions {
  /** The scheme the refused token came with. */
  scheme?: 'bearer' | 'dpop';
  /** A DPoP-bound token sent as Bearer: a bare DPoP challenge follows the Bearer error. */
  dpopBound?: boolean;
  /** `algs` of a DPoP challenge. */
  dpopAlgorithms?: readonly string[];
  /** The operation's scopes, in the challenge of `insufficient_scope`. */
  requiredScopes?: readonly string[];
  /** RFC 9728 section 5.1: the URL of the protected resource metadata, in every challenge. */
  resourceMetadata?: string;
}

/** A request failure with its HTTP meaning; rendered by one error renderer (never its `cause`). */
export class StatusError extends Error {
  override readonly name = 'StatusError';
  readonly body: ErrorBody;
  readonly headers: Record<string, string>;
  /** What its `WWW-Authenticate` was built with. */
  readonly challenge?: ChallengeOptions;

  constructor(
    readonly code: StatusCode,
    args: string[] = [],
    options: {
      cause?: unknown;
      headers?: Record<string, string>;
      challenge?: ChallengeOptions;
    } = {},
  ) {
    const body = errorBody(code, ...args);
    super(`${code} ${body.message}: ${body.description}`, { cause: options.cause });
    this.body = body;
    this.challenge = options.challenge;
    const challenge = wwwAuthenticate(body, options.challenge);
    this.headers = { ...(challenge && { 'WWW-Authenticate': challenge }), ...options.headers };
  }

  get statusCode(): number {
    return this.body.statusCode;
  }
}

/**
 * The one builder of a `WWW-Authenticate` header: the catalogue's challenge of the code (RFC
 * 6750 section 3). A token sent with the DPoP scheme gets the DPoP challenge with the error, then
 * a bare Bearer one (RFC 9449 section 7.2); a DPoP-bound token sent as Bearer, the Bearer error,
 * then a bare DPoP challenge. Undefined for a code without one.
 */
export function wwwAuthenticate(
  body: ErrorBody,
  options: ChallengeOptions = {},
): string | undefined {
  const error = isStatusCode(body.code) ? STATUS[body.code].challenge : undefined;
  if (error === undefined) return undefined;
  const algs = `algs="${(options.dpopAlgorithms ?? []).join(' ')}"`;
  const meta = options.resourceMetadata;
  // Every challenge opens with the realm, then the metadata URL when there is one.
  const realm = `realm="api"${meta === undefined ? '' : `, resource_metadata="${meta}"`}`;
  const scopes = error === 'insufficient_scope' ? options.requiredScopes : undefined;
  if (options.scheme === 'dpop') {
    // No scope attribute for no scopes, nor for one empty scope.
    const scope = scopes?.join(' ') || undefined;
    const err = error === 'bare' ? 'invalid_token' : error;
    return `${errorChallenge(`DPoP ${realm}`, err, body, scope)}, ${algs}, Bearer ${realm}`;
  }
  const scope = scopes?.length ? scopes.join(' ') : undefined;
  // RFC 6750 knows no invalid_dpop_proof.
  const bearerError = error === 'invalid_dpop_proof' ? 'invalid_token' : error;
  // A request that carried no credentials gets the bare challenge (RFC 6750 3.1).
  const bearer =
    error === 'bare'
      ? `Bearer ${realm}`
      : errorChallenge(`Bearer ${realm}`, bearerError, body, scope);
  return options.dpopBound ? `${bearer}, DPoP ${realm}, ${algs}` : bearer;
}

/** One challenge (its scheme and realm) with its error; `scope` undefined: no scope attribute. */
function errorChallenge(opening: string, error: string, body: ErrorBody, scope?: string) {
  const description = body.description.replace(/["\\]/g, '');
  const scoped = scope === undefined ? '' : `, scope="${scope}"`;
  return `${opening}, error="${error}", error_description="${description}"${scoped}`;
}

/** Any thrown value as a StatusError: unknown errors become ERR10010 with nothing leaked. */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  return new StatusError('ERR10010', [], { cause: err });
}
