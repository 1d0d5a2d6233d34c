import type { Clock } from './clock';
import { normalizeHtu, type DpopProofVerifier } from './dpop-proof';
import type { DpopReplayCache } from './dpop-replay-cache';
import type { JwtClaims } from './claims';
import { TokenError } from './token-error';

/**
 * What a verified token's `cnf` claim (RFC 7800) binds it to, read once when the token is
 * verified and cached with it: an RFC 8705 certificate thumbprint (`x5t#S256`), an RFC 9449
 * DPoP key thumbprint (`jkt`), or both. `problem` when the claim binds it to something this
 * service cannot check: such a token is never accepted.
 */
export interface Binding {
  x5t?: string;
  jkt?: string;
  problem?: string;
}

/** The confirmation methods checked here; a `cnf` naming any other is a binding not proven. */
const METHODS = new Set(['x5t#S256', 'jkt']);

/** The binding of a token's claims; undefined when it has no `cnf` (a bearer token). */
export function bindingOf(claims: JwtClaims): Binding | undefined {
  const { cnf } = claims;
  if (cnf === undefined) return undefined;
  if (typeof cnf !== 'object' || cnf === null || Array.isArray(cnf)) {
    return { problem: 'cnf is not an object' };
  }
  const members = Object.entries(cnf as Record<string, unknown>);
  if (members.length === 0) return { problem: 'cnf names no confirmation method' };
  const binding: Binding = {};
  for (const [method, value] of members) {
    if (!METHODS.has(method)) {
      return { problem: 'cnf names a confirmation method other than x5t#S256 and jkt' };
    }
    if (typeof value !== 'string' || value === '') {
      return { problem: `cnf ${method} is not a non-empty string` };
    }
    if (method === 'jkt') binding.jkt = value;
    else binding.x5t = value;
  }
  return binding;
}

/** How a token came: its header's scheme, the token itself and the proof that goes with it. */
export interface Presentation {
  scheme: 'bearer' | 'dpop';
  token: string;
  /** The DPoP proof header of this token (`DPoP` for Authorization, `X-Scope-Token-DPoP`). */
  proof: string | string[] | undefined;
}

/** What a binding is checked against: the request's connection, method and URI. */
export interface RequestFacts {
  /** RFC 8705 `x5t#S256` of the connection's verified client certificate (two-way TLS). */
  clientCertThumbprint?: string;
  /** The request method as sent (DPoP `htm`). */
  method?: string;
  /** The request path as sent, without the query (DPoP `htu`). */
  path?: string;
  /** The request's `Host` header (`:authority` on HTTP/2), when `dpop.origins` is empty. */
  host?: string;
  /** Whether the request came over TLS: the scheme of its URI, when `dpop.origins` is empty. */
  secure?: boolean;
}

export interface TokenBindingOptions {
  verifyProof: DpopProofVerifier;
  replays: DpopReplayCache;
  /** security.yml `dpop.iatWindowSeconds`: how long a proof's `jti` is remembered after its iat. */
  iatWindowSeconds: number;
  /** security.yml `dpop.origins`: the service's external origins, normalized; empty: the Host's. */
  origins: readonly string[];
  now: Clock;
}

/**
 * Checks that a request proves the binding of a token (called for a token with a `cnf`, or one
 * sent with the DPoP scheme; a bearer token without `cnf` has nothing to prove):
 * - a `cnf` this service cannot check: refused;
 * - `x5t#S256` (RFC 8705 section 3): the connection's client certificate has that thumbprint;
 * - `jkt` (RFC 9449 section 7.1): the token came with the DPoP scheme (a DPoP-bound token sent as
 *   Bearer is refused, section 7.2) and a proof that passes section 4.3 for this request and
 *   token, signed by the key of that thumbprint, whose `jti` was not used before;
 * - the DPoP scheme with a token not bound to a DPoP key: refused.
 * Throws a TokenError: `unbound`, `proof` or `replayed`.
 */
export function createTokenBinding(options: TokenBindingOptions) {
  const { verifyProof, replays, iatWindowSeconds, origins, now } = options;

  const targetUris = (request: RequestFacts): string[] => {
    const path = request.path ?? '/';
    const bases = origins.length > 0 ? origins : request.host ? [origin(request)] : [];
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
    const used = replays.use(proof.jti, proof.iat + iatWindowSeconds, now() / 1000);
    if (used === 'replayed') throw new TokenError('replayed', 'DPoP proof jti already used');
    if (used === 'forgotten') {
      throw new TokenError(
        'proof',
        'proof older than the replay cache remembers (dpop.replayCacheMaxEntries)',
      );
    }
  };
}

export type TokenBindingCheck = ReturnType<typeof createTokenBinding>;

const unbound = (reason: string) => new TokenError('unbound', reason);

/** The origin a request names: the scheme it came over and its Host. */
const origin = (request: RequestFacts) => `${request.secure ? 'https' : 'http'}://${request.host}`;
