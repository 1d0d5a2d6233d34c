import { wwwAuthenticate, type ErrorBody } from '@chain/errors';

/** The scheme a token came with: `Bearer` (RFC 6750) or `DPoP` (RFC 9449). */
export type Scheme = 'bearer' | 'dpop';

/** Codes whose DPoP challenge says the proof itself is invalid (RFC 9449 section 7.1). */
const PROOF_CODES = new Set(['ERR20013', 'ERR20014']);

/**
 * The `WWW-Authenticate` of a refusal of a request that used DPoP, or of a DPoP-bound token
 * sent as Bearer; undefined when the catalogue's own RFC 6750 challenge stands (every other
 * refusal: unchanged by DPoP) or the status has none. The service accepts both schemes, so it
 * answers both challenges, as RFC 9449 section 7.2 recommends: the one of the scheme the
 * refused token came with carries the error, the other is bare.
 * - DPoP scheme: `DPoP realm="api", error="…", error_description="…"[, scope="…"], algs="…",
 *   Bearer realm="api"`; `error` is `invalid_dpop_proof` for a proof that is missing, invalid
 *   or replayed, `invalid_token` for any other 401, `insufficient_scope` for a 403.
 * - a DPoP-bound token sent as Bearer: the Bearer challenge with its error, then
 *   `DPoP realm="api", algs="…"` (how to present it).
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
    const description = body.description.replace(/["\\]/g, '');
    const scopes = body.statusCode === 403 && options.requiredScopes?.join(' ');
    const scope = scopes ? `, scope="${scopes}"` : '';
    return {
      'WWW-Authenticate': `DPoP realm="api", error="${error}", error_description="${description}"${scope}, ${algs}, Bearer realm="api"`,
    };
  }
  if (!options.dpopBound) return undefined;
  const bearer = wwwAuthenticate(body, options.requiredScopes)['WWW-Authenticate'];
  return { 'WWW-Authenticate': `${bearer}, DPoP realm="api", ${algs}` };
}
