import type { MockTokenIssuer, TokenResponse } from './mock-jwt';

/**
 * `POST /oauth2/token` of `enableMockJwt` (tests and local work only): a token for the client of
 * the Basic header (else the form's `client_id`), with the form's `user_id` and the scopes its
 * `scope` asks for. Nothing is checked: the mock issuer signs whatever it is asked for.
 */
export function mockTokenResponse(
  issuer: MockTokenIssuer,
  form: URLSearchParams,
  authorization: string | undefined,
): Promise<TokenResponse> {
  const scope = form.get('scope')?.split(/\s+/).filter(Boolean) ?? [];
  return issuer.issue({
    clientId: basicUser(authorization) ?? nonEmpty(form.get('client_id')),
    userId: nonEmpty(form.get('user_id')),
    scopes: scope,
  });
}

function basicUser(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!match) return undefined;
  const user = Buffer.from(match[1], 'base64').toString('utf8').split(':')[0];
  return user || undefined;
}

function nonEmpty(value: string | null): string | undefined {
  return value ? value : undefined;
}
