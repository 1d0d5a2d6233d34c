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

  it("lists the mock issuer's key in the certificate map", () => {
    const security = createSecurity({
      config: securityConfig(certificate, { enableMockJwt: true }),
      env: {},
    });
    expect(security.keys!.known(MOCK_KID)).toBe(security.mockIssuer!.publicKey);
    expect(security.keys!.known('100')).toBeDefined();
  });

  it('fails at build, naming the file and key, for a certificate that cannot be read', () => {
    expect(() =>
      createSecurity({ config: securityConfig({ '101': '/missing/secondary.crt' }) }),
    ).toThrow(
      'Config error in security.yml at key "jwt.certificate.101": file not found: /missing/secondary.crt',
    );
  });
});
