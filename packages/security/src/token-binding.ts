import type { Scheme } from './bearer.js';
import type { Binding } from './claims.js';
import type { Clock } from './key-source.js';
import { createDpopProofVerifier, normalizeHtu } from './dpop-proof.js';
import { DpopReplayCache, type ReplayStore } from './dpop-replay-cache.js';
import type { SecurityConfig } from './security-config.js';
import { TokenError } from './token-error.js';

export interface Presentation {
  scheme: Scheme;
  token: string;
  proof: string | string[] | undefined;
}

export interface RequestFacts {
  /** RFC 8705 `x5t#S256` of the verified client certificate. */
  clientCertThumbprint?: string;
  /** As sent, the path without the query. */
  method?: string;
  path?: string;
}

/**
 * A proof's `htu` must name this service: one of `dpop.origins`, else one of `ownOrigins`, what
 * the service's own configuration says it is reached at (the runtime's: its listener's port and
 * its certificate's names). Never a request header: a `Host` naming another service would make a
 * proof captured on the way there valid here too.
 */
export function createTokenBinding(
  dpop: SecurityConfig['dpop'],
  now: Clock,
  ownOrigins: () => readonly string[] = () => [],
  replays: ReplayStore = new DpopReplayCache(dpop.replayCacheMaxEntries),
) {
  const verifyProof = createDpopProofVerifier(dpop, now);

  return async (
    binding: Binding | undefined,
    presented: Presentation,
    request: RequestFacts,
  ): Promise<void> => {
    if (binding?.problem) throw unbound(binding.problem);
    if (binding?.x5t !== undefined) {
      if (request.clientCertThumbprint === undefined) {
        throw unbound('certificate-bound token on a connection without a client certificate');
      }
      if (request.clientCertThumbprint !== binding.x5t) {
        throw unbound('client certificate is not the one the token is bound to');
      }
    }
    if (binding?.jkt === undefined) {
      if (presented.scheme === 'dpop') throw unbound('DPoP scheme for a token not bound to a key');
      return;
    }
    if (presented.scheme !== 'dpop') throw unbound('DPoP-bound token sent as Bearer');
    const bases = dpop.origins.length > 0 ? dpop.origins : ownOrigins();
    const uris = bases.map((base) => normalizeHtu(base + (request.path ?? '/')));
    const proof = await verifyProof(presented.proof, {
      method: request.method ?? '',
      uris: uris.filter((uri) => uri !== undefined),
      accessToken: presented.token,
    });
    if (proof.thumbprint !== binding.jkt) {
      throw unbound('DPoP proof is signed by another key than the token is bound to');
    }
    const used = await replays.use(proof.jti, proof.iat + dpop.iatWindowSeconds, now() / 1000);
    if (used === 'replayed') throw new TokenError('replayed', 'DPoP proof jti already used');
    if (used === 'forgotten') {
      throw new TokenError(
        'proof',
        'proof older than the replay cache remembers (dpop.replayCacheMaxEntries)',
      );
    }
  };
}

const unbound = (reason: string) => new TokenError('unbound', reason);
