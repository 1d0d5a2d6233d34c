import type { TokenHeader, TokenRefusal } from '@chain/errors';
import { errors } from 'jose';

/** The message is a fixed reason for the log, never any part of the token; `code`: why. */
export class TokenError extends Error {
  override readonly name = 'TokenError';

  constructor(
    readonly code: TokenRefusal,
    reason: string,
  ) {
    super(reason);
  }
}

export const invalidToken = (reason: string) => new TokenError('invalid', reason);

// light-4j's words in a description: `authorization header`.
export const HEADER_NAMES: Record<TokenHeader, string> = {
  auth: 'authorization',
  scope: 'X-Scope-Token',
};

const JOSE_REFUSALS: Record<string, string> = {
  ERR_JWS_INVALID: 'token is not a compact JWS with a JSON header',
  ERR_JWT_INVALID: 'payload is not a JSON object',
  ERR_JOSE_NOT_SUPPORTED: 'crit header parameters are not supported',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'signature does not verify',
};

export function refusalOf(
  err: unknown,
  algorithms: readonly string[],
  refuse = invalidToken,
  reasons = JOSE_REFUSALS,
  fallback = 'token is not a valid JWS',
): unknown {
  if (!(err instanceof errors.JOSEError)) return err;
  const reason =
    err.code === 'ERR_JOSE_ALG_NOT_ALLOWED'
      ? `alg is not ${algorithms.join(', ')}`
      : (reasons[err.code] ?? fallback);
  return refuse(reason);
}
