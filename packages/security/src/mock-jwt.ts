import crypto, { type KeyObject } from 'node:crypto';
import { ConfigError } from '@chain/errors';
import { SignJWT, type JWTPayload } from 'jose';
import type { Clock } from './clock';

export const MOCK_KID = 'mock-jwt';

export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  scope?: string;
}

/**
 * `enableMockJwt`: a token issuer for tests and local work, with a key of its own made at start
 * (kid `mock-jwt`, added to the service's key map). Its tokens carry light-oauth2's claims.
 */
export class MockTokenIssuer {
  readonly kid = MOCK_KID;
  readonly publicKey: KeyObject;
  private readonly privateKey: KeyObject;

  constructor(
    private readonly now: Clock,
    readonly expiresInSeconds = 600,
    /** `iss` and `aud` of the tokens: the first accepted issuer and audience, when checked. */
    private readonly claims: { issuer?: string; audience?: string } = {},
  ) {
    const pair = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKey = pair.publicKey;
    this.privateKey = pair.privateKey;
  }

  async issue(request: {
    clientId?: string;
    userId?: string;
    scopes?: string[];
  }): Promise<TokenResponse> {
    const iat = Math.floor(this.now() / 1000);
    const claims: JWTPayload = {
      iss: this.claims.issuer ?? 'urn:com:networknt:oauth2:v1',
      aud: this.claims.audience ?? 'urn:com.networknt',
      exp: iat + this.expiresInSeconds,
      iat,
      nbf: iat - 120,
      jti: crypto.randomUUID(),
      client_id: request.clientId ?? 'mock-client',
      scope: request.scopes ?? [],
    };
    if (request.userId) claims.user_id = request.userId;
    const response: TokenResponse = {
      access_token: await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: this.kid })
        .sign(this.privateKey),
      token_type: 'bearer',
      expires_in: this.expiresInSeconds,
    };
    if (request.scopes?.length) response.scope = request.scopes.join(' ');
    return response;
  }
}

/** A service with `enableMockJwt` refuses to start in production. */
export function assertMockJwtAllowed(
  enableMockJwt: boolean,
  env: NodeJS.ProcessEnv,
  file = 'security.yml',
): void {
  if (enableMockJwt && env.NODE_ENV === 'production') {
    throw new ConfigError(
      file,
      'enableMockJwt',
      'must be false when NODE_ENV=production (the mock token endpoint is for tests only)',
    );
  }
}
