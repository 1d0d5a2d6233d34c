import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import { DPoP, type DPoPHandle } from 'oauth4webapi';

const P256 = { name: 'ECDSA', namedCurve: 'P-256' };

/**
 * One key pair, in memory only (a restart is the rotation). oauth4webapi's `handle` proves the
 * token requests (and keeps the servers' nonces); `proof` the downstream calls, whose proof
 * oauth4webapi cannot give: it puts its proofs only in the `DPoP` header of its own requests.
 * Both take `iat` from the real clock, as the servers that check it do.
 */
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
    // The hash is about 2% of the signature: worth no cache.
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
