import type { StatusCode } from '@chain/errors';
import { errors } from 'jose';

/** The message is a fixed reason for the log, never any part of the token. */
export class TokenError extends Error {
  override readonly name = 'TokenError';

  constructor(
    readonly kind: 'invalid' | 'expired' | 'inactive' | 'unbound' | 'proof' | 'replayed',
    reason: string,
  ) {
    super(reason);
  }
}

export const invalidToken = (reason: string) => new TokenError('invalid', reason);

export type TokenHeader = 'auth' | 'scope';

const BINDING_CODES = { unbound: 'ERR20012', proof: 'ERR20013', replayed: 'ERR20014' } as const;
export const REFUSAL_CODES: Record<TokenHeader, Record<TokenError['kind'], StatusCode>> = {
  auth: { invalid: 'ERR10000', expired: 'ERR10001', inactive: 'ERR10081', ...BINDING_CODES },
  scope: { invalid: 'ERR10003', expired: 'ERR10004', inactive: 'ERR10003', ...BINDING_CODES },
};

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
