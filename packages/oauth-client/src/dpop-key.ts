import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, type JWK } from 'jose';

/** Every DPoP server supports it (RFC 9449 5.1). */
const ALG = 'ES256';

/** In memory only (a restart is the rotation); a new proof per call: servers refuse a seen `jti`. */
export class DpopKey {
  readonly #privateKey: KeyObject;
  readonly jwk: JWK;
  private readonly now: () => number;
  /** The `ath` of the last token proved (the same token is sent many times). */
  #last: { token: string; ath: string } | undefined;

  constructor(options: { now?: () => number } = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#privateKey = privateKey;
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' }) as Required<JWK>;
    this.jwk = { kty, crv, x, y };
    this.now = options.now ?? Date.now;
  }

  /** The `cnf.jkt` of the tokens bound to it. */
  thumbprint(): Promise<string> {
    return calculateJwkThumbprint(this.jwk, 'sha256');
  }

  /** A new proof for one request (`htu` without query and fragment); `nonce`: `DPoP-Nonce`. */
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
