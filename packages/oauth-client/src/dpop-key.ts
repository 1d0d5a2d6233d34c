import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, type JWK } from 'jose';

/** The one algorithm of the proofs: ES256, which every DPoP server supports (RFC 9449 5.1). */
const ALG = 'ES256';

/**
 * A service's DPoP key (RFC 9449): an ES256 key pair made when the service starts, kept in memory
 * only, and the proofs signed with it. A new process is a new key: a restart is the rotation,
 * and the tokens bound to the old key, kept by the old process only, went with it. Nothing is
 * stored, so there is nothing to leak or to rotate on disk.
 *
 * A proof (`proof`) is a JWT with header `typ: dpop+jwt`, `alg: ES256` and the public `jwk`, and
 * claims `htm`, `htu` (the target URI without query and fragment), `iat` (seconds), a `jti` unique
 * per proof (a random UUID) and, with a token, `ath` (base64url SHA-256 of the token); signed by
 * jose's `SignJWT`. A new proof for every request: a server refuses a `jti` seen before.
 */
export class DpopKey {
  readonly #privateKey: KeyObject;
  /** The public key as a JWK: only its public members. */
  readonly jwk: JWK;
  private readonly now: () => number;
  /** The `ath` of the last token proved (a service sends the same token many times). */
  #last: { token: string; ath: string } | undefined;

  constructor(options: { now?: () => number } = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#privateKey = privateKey;
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' }) as Required<JWK>;
    this.jwk = { kty, crv, x, y };
    this.now = options.now ?? Date.now;
  }

  /** The RFC 7638 thumbprint of the public key: the `cnf.jkt` of the tokens bound to it. */
  thumbprint(): Promise<string> {
    return calculateJwkThumbprint(this.jwk, 'sha256');
  }

  /**
   * A new proof for one request: `method` and `url` as sent (the query and fragment are left out
   * of `htu`), `accessToken` when the request presents one. `nonce`: the server's `DPoP-Nonce`.
   */
  proof(method: string, url: URL, accessToken?: string, nonce?: string): Promise<string> {
    const claims: Record<string, string> = { htm: method, htu: url.origin + url.pathname };
    if (accessToken !== undefined) claims.ath = this.ath(accessToken);
    if (nonce !== undefined) claims.nonce = nonce;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: ALG, typ: 'dpop+jwt', jwk: this.jwk })
      .setIssuedAt(Math.floor(this.now() / 1000))
      .setJti(randomUUID())
      .sign(this.#privateKey);
  }

  private ath(token: string): string {
    if (this.#last?.token !== token) {
      this.#last = { token, ath: createHash('sha256').update(token).digest('base64url') };
    }
    return this.#last.ath;
  }
}
