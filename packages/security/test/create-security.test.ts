import { createSigningKey, writeCertificate } from '@chain/testkit';
import { createSecurity } from '../src/create-security';
import { MOCK_KID } from '../src/mock-jwt';
import { securityConfig } from './helpers';

const primary = createSigningKey('100');
const certificate = { '100': writeCertificate(primary) };

describe('createSecurity', () => {
  it('builds nothing but the mock issuer when verification is off', () => {
    const security = createSecurity({
      config: securityConfig({ '100': '/missing.crt' }, { enableVerifyJwt: false }),
    });
    expect(security).toEqual({ mockIssuer: undefined });
  });

  it('builds the cache only with enableJwtCache', () => {
    expect(createSecurity({ config: securityConfig(certificate) }).cache?.maxEntries).toBe(100);
    expect(
      createSecurity({ config: securityConfig(certificate, { enableJwtCache: false }) }).cache,
    ).toBeUndefined();
  });

  it("lists the mock issuer's key beside the certificates, and its tokens carry the checked aud and iss", async () => {
    const security = createSecurity({
      config: securityConfig(certificate, { enableMockJwt: true }),
      claims: { audience: ['urn:chain:api'], issuer: ['https://issuer'] },
      env: {},
    });
    expect(security.keys!.current(MOCK_KID)!.key).toBe(security.mockIssuer!.publicKey);
    expect(security.keys!.current('100')).toBeDefined();
    const { access_token } = security.mockIssuer!.issue({ scopes: ['a'] });
    const claims = JSON.parse(Buffer.from(access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ aud: 'urn:chain:api', iss: 'https://issuer' });
    const authorized = await security.authorize!({
      authorization: `Bearer ${access_token}`,
      scopeToken: undefined,
      requiredScopes: ['a'],
    });
    expect(authorized!.auth.scopes).toEqual(['a']);
  });

  it('accepts mock tokens (RS256) even when jwt.algorithms lists only others', async () => {
    const ec = createSigningKey('ec', { type: 'ec' });
    const security = createSecurity({
      config: securityConfig(
        { ec: writeCertificate(ec) },
        { enableMockJwt: true, jwt: { algorithms: ['ES256'] } as never },
      ),
      env: {},
    });
    const { access_token } = security.mockIssuer!.issue({});
    await expect(
      security.authorize!({
        authorization: `Bearer ${access_token}`,
        scopeToken: undefined,
        requiredScopes: [],
      }),
    ).resolves.toBeDefined();
  });

  it('fails at build, naming the file and key, for a certificate that cannot be read', () => {
    expect(() =>
      createSecurity({ config: securityConfig({ '101': '/missing/secondary.crt' }) }),
    ).toThrow(
      'Config error in security.yml at key "jwt.certificate.101": file not found: /missing/secondary.crt',
    );
  });

  it('with bootstrapFromKeyService reads no certificate and preloads a JWKS', async () => {
    const fetch = jest.fn(
      async () => new Map([['k', { material: primary.publicKey.export({ format: 'jwk' }) }]]),
    );
    const security = createSecurity({
      config: securityConfig({ '100': '/missing.crt' }, { bootstrapFromKeyService: true }),
      keySource: { kind: 'set', fetch },
    });
    expect(await security.preloaded).toBe(1);
    expect(security.keys!.current('k')).toBeDefined();
    expect(security.keys!.current('100')).toBeUndefined();
  });

  it('preloads nothing from a key server by kid (light-oauth2 cannot list its keys)', () => {
    const security = createSecurity({
      config: securityConfig({}, { bootstrapFromKeyService: true }),
      keySource: { kind: 'kid', fetch: async () => undefined },
    });
    expect(security.preloaded).toBeUndefined();
  });
});
