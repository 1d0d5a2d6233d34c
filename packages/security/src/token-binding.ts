import type { Binding } from './claims';
import type { Clock } from './clock';
import { createDpopProofVerifier, normalizeHtu } from './dpop-proof';
import { DpopReplayCache } from './dpop-replay-cache';
import type { SecurityConfig } from './security-config';
import { TokenError } from './token-error';

/** How a token came: its header's scheme, the token and its DPoP proof header. */
export interface Presentation {
  scheme: 'bearer' | 'dpop';
  token: string;
  proof: string | string[] | undefined;
}

/** What a binding is proven against: the request's connection, method and URI. */
export interface RequestFacts {
  /** RFC 8705 `x5t#S256` of the connection's verified client certificate. */
  clientCertThumbprint?: string;
  /** The method and the path (without the query) as sent: DPoP `htm` and `htu`. */
  method?: string;
  path?: string;
  /** The `Host` (`:authority` on HTTP/2) and whether over TLS: `htu` when `dpop.origins` is empty. */
  host?: string;
  secure?: boolean;
}

/**
 * That a request proves a token's binding (README "Bound tokens"): `x5t#S256` (RFC 8705) the
 * connection's certificate, `jkt` (RFC 9449) the DPoP scheme and a fresh proof by that key.
 * Throws a TokenError `unbound`, `proof` or `replayed`.
 */
export function createTokenBinding(dpop: SecurityConfig['dpop'], now: Clock) {
  const verifyProof = createDpopProofVerifier(dpop, now);
  const replays = new DpopReplayCache(dpop.replayCacheMaxEntries);

  const targetUris = (request: RequestFacts): string[] => {
    const path = request.path ?? '/';
    const { host, secure } = request;
    const bases =
      dpop.origins.length > 0
        ? dpop.origins
        : host
          ? [`${secure ? 'https' : 'http'}://${host}`]
          : [];
    const uris: string[] = [];
    for (const base of bases) {
      const uri = normalizeHtu(base + path);
      if (uri !== undefined) uris.push(uri);
    }
    return uris;
  };

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
    const proof = await verifyProof(presented.proof, {
      method: request.method ?? '',
      uris: targetUris(request),
      accessToken: presented.token,
    });
    if (proof.thumbprint !== binding.jkt) {
      throw unbound('DPoP proof is signed by another key than the token is bound to');
    }
    const used = replays.use(proof.jti, proof.iat + dpop.iatWindowSeconds, now() / 1000);
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
