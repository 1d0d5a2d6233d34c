import crypto from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import type { Clock } from './key-source.js';

const EXPIRES_IN = 600;

/** `enableMockJwt`: light-oauth2's claims, signed by a key made at start (kid `mock-jwt`). */
export class MockTokenIssuer {
  readonly kid = 'mock-jwt';
  private readonly pair = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  readonly publicKey = this.pair.publicKey;

  constructor(
    private readonly now: Clock,
    private readonly claims: { issuer?: string; audience?: string } = {},
  ) {}

  async issue(request: { clientId?: string; userId?: string; scopes?: string[] }) {
    const iat = Math.floor(this.now() / 1000);
    const claims: JWTPayload = {
      iss: this.claims.issuer ?? 'urn:com:networknt:oauth2:v1',
      aud: this.claims.audience ?? 'urn:com.networknt',
      exp: iat + EXPIRES_IN,
      iat,
      nbf: iat - 120,
      jti: crypto.randomUUID(),
      client_id: request.clientId ?? 'mock-client',
      sub: request.userId ?? request.clientId ?? 'mock-client',
      scope: request.scopes ?? [],
    };
    if (request.userId) claims.user_id = request.userId;
    const access_token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: this.kid }) // RFC 9068
      .sign(this.pair.privateKey);
    const scope = request.scopes?.length ? { scope: request.scopes.join(' ') } : {};
    return { access_token, token_type: 'bearer' as const, expires_in: EXPIRES_IN, ...scope };
  }
}

/** `POST /oauth2/token` of `enableMockJwt`: nothing is checked. */
export function mockTokenResponse(
  issuer: MockTokenIssuer,
  form: URLSearchParams,
  authorization: string | undefined,
) {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(authorization ?? '');
  const user = basic && Buffer.from(basic[1], 'base64').toString('utf8').split(':')[0];
  return issuer.issue({
    clientId: user || form.get('client_id') || undefined,
    userId: form.get('user_id') || undefined,
    scopes: form.get('scope')?.split(/\s+/).filter(Boolean) ?? [],
  });
}
