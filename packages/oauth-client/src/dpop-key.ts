import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import { DPoP, type DPoPHandle } from 'oauth4webapi';

/** Every DPoP server supports it (RFC 9449 5.1). */
const ALG = 'ES256';
const P256 = { name: 'ECDSA', namedCurve: 'P-256' };

/**
 * One key pair, in memory only (a restart is the rotation). oauth4webapi's `handle` proves the
 * token requests (and keeps the servers' nonces); `proof` the downstream calls, whose proof
 * oauth4webapi cannot give: it puts its proofs only in the `DPoP` header of its own requests.
 */
export class DpopKey {
  readonly #privateKey: KeyObject;
  readonly jwk: JWK;
  readonly handle: DPoPHandle;
  private readonly now: () => number;
  /** The `ath` of the last token proved (the same token is sent many times). */
  #last: { token: string; ath: string } | undefined;

  constructor(options: { now?: () => number } = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#privateKey = privateKey;
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' }) as Required<JWK>;
    this.jwk = { kty, crv, x, y };
    const pair = {
      privateKey: privateKey.toCryptoKey(P256, false, ['sign']),
      publicKey: publicKey.toCryptoKey(P256, true, ['verify']),
    };
    this.handle = DPoP({}, pair);
    this.now = options.now ?? Date.now;
  }

  /** The `cnf.jkt` of the tokens bound to it. */
  thumbprint(): Promise<string> {
    return this.handle.calculateThumbprint();
  }

  /** A new proof for one call (`htu` without query and fragment): servers refuse a seen `jti`. */
  proof(method: string, url: URL, accessToken?: string): Promise<string> {
    const claims: Record<string, string> = { htm: method, htu: url.origin + url.pathname };
    if (accessToken !== undefined) claims.ath = this.ath(accessToken);
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
