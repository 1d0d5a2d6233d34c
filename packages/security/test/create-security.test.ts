import * as jose from 'jose';
import { createSigningKey, mintToken, writeCertificate } from '@chain/testkit';
import { createSecurity, type Security } from '../src/create-security';
import { securityConfig } from './helpers';

// jose's compactVerify, counted: one call per token that is not served from the cache.
jest.mock('jose', () =>
  jest.requireActual<typeof import('./counted-jose')>('./counted-jose').countedJose(),
);
const compactVerify = jose.compactVerify as jest.Mock;

const primary = createSigningKey('100');
const certificate = { '100': writeCertificate(primary) };

const authorize = (security: Security, token: string, requiredScopes: string[] = []) =>
  security.authorize!({ authorization: `Bearer ${token}`, scopeToken: undefined, requiredScopes });

describe('createSecurity', () => {
  beforeEach(() => compactVerify.mockClear());

  it('builds nothing but the mock issuer when verification is off', () => {
    const security = createSecurity({
      config: securityConfig({ '100': '/missing.crt' }, { enableVerifyJwt: false }),
    });
    expect(security).toEqual({ mockIssuer: undefined });
  });

  it('verifies a token once with enableJwtCache, holding jwt.cacheMaxEntries tokens', async () => {
    const config = securityConfig(certificate, { jwt: { cacheMaxEntries: 1 } as never });
    const security = createSecurity({ config });
    const [a, b] = [mintToken(primary), mintToken(primary)];
    for (const token of [a, a, b, b, a]) await authorize(security, token);
    expect(compactVerify).toHaveBeenCalledTimes(3);
  });

  it('verifies every time without enableJwtCache', async () => {
    const config = securityConfig(certificate, { enableJwtCache: false });
    const security = createSecurity({ config });
    const token = mintToken(primary);
    for (let i = 0; i < 3; i++) await authorize(security, token);
    expect(compactVerify).toHaveBeenCalledTimes(3);
  });

  it("verifies the mock issuer's tokens beside the certificates, and they carry the checked aud and iss", async () => {
    const security = createSecurity({
      config: securityConfig(certificate, { enableMockJwt: true }),
      claims: { audience: ['urn:chain:api'], issuer: ['https://issuer'] },
      env: {},
    });
    const { access_token } = await security.mockIssuer!.issue({ scopes: ['a'] });
    expect(jose.decodeProtectedHeader(access_token)).toEqual({
      alg: 'RS256',
      typ: 'JWT',
      kid: 'mock-jwt',
    });
    expect(jose.decodeJwt(access_token)).toMatchObject({
      aud: 'urn:chain:api',
      iss: 'https://issuer',
    });
    const authorized = await authorize(security, access_token, ['a']);
    expect(authorized!.auth.scopes).toEqual(['a']);
    const claims = { aud: 'urn:chain:api', iss: 'https://issuer' };
    await expect(authorize(security, mintToken(primary, { claims }))).resolves.toBeDefined();
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
    const { access_token } = await security.mockIssuer!.issue({});
    await expect(authorize(security, access_token)).resolves.toBeDefined();
  });

  it('fails at build, naming the file and key, for a certificate that cannot be read', () => {
    expect(() =>
      createSecurity({ config: securityConfig({ '101': '/missing/secondary.crt' }) }),
    ).toThrow(
      'Config error in security.yml at key "jwt.certificate.101": file not found: /missing/secondary.crt',
    );
  });

  it('with bootstrapFromKeyService reads no certificate and fetches a JWKS at start', async () => {
    const k = createSigningKey('k');
    const fetch = jest.fn(
      async () => new Map([['k', { material: k.publicKey.export({ format: 'jwk' }) }]]),
    );
    const security = createSecurity({
      config: securityConfig({ '100': '/missing.crt' }, { bootstrapFromKeyService: true }),
      keySource: { kind: 'set', fetch },
    });
    expect(fetch).toHaveBeenCalledTimes(1);
    await expect(authorize(security, mintToken(k))).resolves.toBeDefined();
    await expect(authorize(security, mintToken(primary))).rejects.toMatchObject({
      code: 'ERR10000',
    });
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('fetches nothing at start from a key server by kid (light-oauth2 cannot list its keys)', () => {
    const fetch = jest.fn(async () => undefined);
    createSecurity({
      config: securityConfig({}, { bootstrapFromKeyService: true }),
      keySource: { kind: 'kid', fetch },
    });
    expect(fetch).not.toHaveBeenCalled();
  });
});
