import { errorChallenge, wwwAuthenticate, type ErrorBody } from '@chain/errors';

export type Scheme = 'bearer' | 'dpop';

const PROOF_CODES = new Set(['ERR20013', 'ERR20014']);

/**
 * RFC 9449 section 7.2: both schemes are challenged, the one the token came with carries the
 * error; undefined when the catalogue's RFC 6750 challenge stands.
 */
export function bindingChallenge(
  scheme: Scheme,
  body: ErrorBody,
  algorithms: readonly string[],
  options: { dpopBound?: boolean; requiredScopes?: readonly string[] },
): Record<string, string> | undefined {
  if (body.statusCode !== 401 && body.statusCode !== 403) return undefined;
  const algs = `algs="${algorithms.join(' ')}"`;
  if (scheme === 'dpop') {
    const error =
      body.statusCode === 403
        ? 'insufficient_scope'
        : PROOF_CODES.has(body.code)
          ? 'invalid_dpop_proof'
          : 'invalid_token';
    const scopes = body.statusCode === 403 && options.requiredScopes?.join(' ');
    const dpop = errorChallenge('DPoP', error, body, scopes || undefined);
    return { 'WWW-Authenticate': `${dpop}, ${algs}, Bearer realm="api"` };
  }
  if (!options.dpopBound) return undefined;
  const bearer = wwwAuthenticate(body, options.requiredScopes)['WWW-Authenticate'];
  return { 'WWW-Authenticate': `${bearer}, DPoP realm="api", ${algs}` };
}
