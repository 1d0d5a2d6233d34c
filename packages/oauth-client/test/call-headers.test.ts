import { createHash } from 'node:crypto';
import { credentialHeaders, credentialSummary, forwardedAuthorization } from '../src/index.js';
import { fakeJwt } from './support/https-server.js';

describe('credentialHeaders', () => {
  it("keeps the caller's Authorization and adds the own token as X-Scope-Token", () => {
    expect(credentialHeaders('Bearer user-jwt', 'own')).toEqual({
      Authorization: 'Bearer user-jwt',
      'X-Scope-Token': 'Bearer own',
    });
  });
  it('puts the own token in Authorization when the caller sent none', () => {
    expect(credentialHeaders(undefined, 'own')).toEqual({ Authorization: 'Bearer own' });
    expect(credentialHeaders('', 'own')).toEqual({ Authorization: 'Bearer own' });
  });
  it('a DPoP-bound own token goes with its proof (RFC 9449 7.1), beside the caller’s token too', () => {
    expect(credentialHeaders(undefined, 'own', 'proof')).toEqual({
      Authorization: 'DPoP own',
      DPoP: 'proof',
    });
    expect(credentialHeaders('Bearer user-jwt', 'own', 'proof')).toEqual({
      Authorization: 'Bearer user-jwt',
      'X-Scope-Token': 'DPoP own',
      'X-Scope-Token-DPoP': 'proof',
    });
  });
});

describe('forwardedAuthorization', () => {
  it('a Bearer token without cnf goes on as it is', () => {
    expect(forwardedAuthorization('Bearer user-jwt', { sub: 'u' } as { cnf?: unknown })).toBe(
      'Bearer user-jwt',
    );
    expect(forwardedAuthorization('Bearer user-jwt')).toBe('Bearer user-jwt');
  });
  it('a bound caller token stops at the hop: the DPoP scheme, or cnf in its claims', () => {
    expect(forwardedAuthorization('DPoP user-jwt', {})).toBeUndefined();
    expect(forwardedAuthorization(' dpop user-jwt')).toBeUndefined();
    expect(forwardedAuthorization('Bearer user-jwt', { cnf: { 'x5t#S256': 'x' } })).toBeUndefined();
    expect(forwardedAuthorization('Bearer user-jwt', { cnf: { jkt: 'j' } })).toBeUndefined();
  });
  it('no header: none', () => {
    expect(forwardedAuthorization(undefined)).toBeUndefined();
    expect(forwardedAuthorization('')).toBeUndefined();
  });
});

describe('credentialSummary', () => {
  const user = fakeJwt({ client_id: 'chain-user', user_id: 'steve', scope: 'api_a.r' });
  const own = fakeJwt({ client_id: 'api-a-client' });
  const fp = (t: string) => createHash('sha256').update(t).digest('hex').slice(0, 16);

  it('client_id, user_id and a fingerprint per token, never the token', () => {
    const summary = credentialSummary({
      authorization: `Bearer ${user}`,
      'x-scope-token': `bearer  ${own}`,
    });
    expect(credentialSummary({ authorization: `DPoP ${user}` }).authorization).toEqual(
      summary.authorization,
    );
    expect(summary).toEqual({
      authorization: { fingerprint: fp(user), client_id: 'chain-user', user_id: 'steve' },
      scopeToken: { fingerprint: fp(own), client_id: 'api-a-client' },
    });
    expect(JSON.stringify(summary)).not.toContain(user.split('.')[1]);
  });

  it('no headers, an array header, a token that is not a JWT, claims that are not strings', () => {
    expect(credentialSummary({})).toEqual({});
    expect(credentialSummary({ authorization: ['a', 'b'] })).toEqual({});
    expect(credentialSummary({ authorization: 'Bearer opaque' })).toEqual({
      authorization: { fingerprint: fp('opaque') },
    });
    expect(credentialSummary({ authorization: 'Bearer a.bm90IGpzb24.c' })).toEqual({
      authorization: { fingerprint: fp('a.bm90IGpzb24.c') },
    });
    const odd = fakeJwt({ client_id: 7, user_id: null });
    expect(credentialSummary({ authorization: `Bearer ${odd}` })).toEqual({
      authorization: { fingerprint: fp(odd) },
    });
    const nullClaims = `a.${Buffer.from('null').toString('base64url')}.c`;
    expect(credentialSummary({ authorization: `Bearer ${nullClaims}` })).toEqual({
      authorization: { fingerprint: fp(nullClaims) },
    });
  });
});
