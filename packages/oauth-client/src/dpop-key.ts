import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import { DPoP, type DPoPHandle } from 'oauth4webapi';

const P256 = { name: 'ECDSA', namedCurve: 'P-256' };

/** `handle` proves the token requests, `proof` the downstream calls (README, "Token requests"). */
export class DpopKey {
  readonly #privateKey: KeyObject;
  readonly jwk: JWK;
  readonly handle: DPoPHandle;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#privateKey = privateKey;
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' }) as Required<JWK>;
    this.jwk = { kty, crv, x, y };
    const pair = {
      privateKey: privateKey.toCryptoKey(P256, false, ['sign']),
      publicKey: publicKey.toCryptoKey(P256, true, ['verify']),
    };
    this.handle = DPoP({}, pair);
  }

  /** The `cnf.jkt` of the tokens bound to it. */
  thumbprint(): Promise<string> {
    return this.handle.calculateThumbprint();
  }

  /** A new proof for one call (`htu` without query and fragment): servers refuse a seen `jti`. */
  proof(method: string, url: URL, accessToken?: string): Promise<string> {
    const claims: Record<string, string> = { htm: method, htu: url.origin + url.pathname };
    if (accessToken !== undefined) {
      claims.ath = createHash('sha256').update(accessToken).digest('base64url');
    }
    // ES256: every DPoP server supports it (RFC 9449 5.1).
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: this.jwk })
      .setIssuedAt()
      .setJti(randomUUID())
      .sign(this.#privateKey);
  }
}
