import type { JwtClaims } from './jwt-decode';
import { invalidToken } from './token-error';

/**
 * Opt-in checks of who issued a token and for whom (client.yml `oauth.key.audience`, light-4j's
 * key, and `oauth.key.issuer`, ours). A check that is configured needs its claim: a token
 * without `aud` fails an audience check.
 */
export interface ClaimChecks {
  /** The token's `aud` (a string or a list) must hold one of these. */
  audience?: readonly string[];
  /** The token's `iss` must be one of these. */
  issuer?: readonly string[];
}

export function checkClaims(claims: JwtClaims, checks: ClaimChecks | undefined): void {
  if (checks?.issuer?.length) {
    const { iss } = claims;
    if (typeof iss !== 'string' || !checks.issuer.includes(iss)) {
      throw invalidToken('iss is not an accepted issuer');
    }
  }
  if (checks?.audience?.length) {
    const { aud } = claims;
    const held = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
    if (!held.some((a) => typeof a === 'string' && checks.audience!.includes(a))) {
      throw invalidToken('aud holds no accepted audience');
    }
  }
}
