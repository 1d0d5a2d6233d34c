import type { Mock } from 'vitest';
import * as jose from 'jose';
import { createSigningKey, mintToken, writeCertificate } from '@chain/testkit';
import { createRequestGuard, type GuardRequest, type RequestGuard } from '../src/request-guard.js';
import { verifiedCallerOf } from '../src/authorizer.js';
import { MockTokenIssuer, mockTokenResponse } from '../src/mock-jwt.js';
import { StatusError } from '@chain/errors';
import type { SecurityConfig } from '../src/security-config.js';
import { recordedEvents, securityConfig } from './helpers.js';

// jose's compactVerify, counted: one call per token that is not served from the cache.
vi.mock('jose', async (original) => (await import('./counted-jose.js')).countedJose(original));
const compactVerify = jose.compactVerify as Mock;

const primary = createSigningKey('100');
const certificate = { '100': writeCertificate(primary) };

function guardWith(config: SecurityConfig) {
  const { events: logger, lines } = recordedEvents();
  const guard = createRequestGuard({ config, env: {}, logger });
  return { guard, lines };
}

const request = (authorization?: string, extra: Partial<GuardRequest> = {}): GuardRequest => ({
  authorization,
  scopeToken: undefined,
  requiredScopes: ['read:pets'],
  correlationId: 'cid-1',
  remoteAddress: '127.0.0.9',
  ...extra,
});

const refusal = async (promise: Promise<unknown>) => {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StatusError);
  return err as StatusError;
};

describe('createRequestGuard', () => {
  it('has nothing to check when enableVerifyJwt is false', () => {
    const { guard } = guardWith(securityConfig(certificate, { enableVerifyJwt: false }));
    expect(guard.check).toBeUndefined();
    expect(guard.mockIssuer).toBeUndefined();
  });

  it('resolves with the verified caller', async () => {
    const { guard } = guardWith(securityConfig(certificate));
    const token = mintToken(primary, { clientId: 'c1', userId: 'u1', scope: ['read:pets'] });
    await expect(guard.check!(request(`Bearer ${token}`))).resolves.toMatchObject({
      clientId: 'c1',
      userId: 'u1',
      scopes: ['read:pets'],
    });
  });

  describe('the log: one line per refusal, never the token, never a stack', () => {
    it('a missing token', async () => {
      const { guard, lines } = guardWith(securityConfig(certificate));
      expect((await refusal(guard.check!(request()))).code).toBe('ERR10002');
      expect(lines).toEqual([
        {
          level: 'warn',
          message: 'token refused',
          record: {
            code: 'ERR10002',
            reason: 'no Authorization header',
            correlationId: 'cid-1',
            remoteAddress: '127.0.0.9',
          },
        },
      ]);
      await refusal(guard.check!(request('Basic abc')));
      expect(lines[1].record.reason).toBe('Authorization is not Bearer <token> or DPoP <token>');
    });

    it('a forged token: the reason and the client it claims', async () => {
      const { guard, lines } = guardWith(securityConfig(certificate));
      const forged = mintToken(createSigningKey('100'), {
        clientId: 'claimed',
        scope: ['read:pets'],
      });
      expect((await refusal(guard.check!(request(`Bearer ${forged}`)))).code).toBe('ERR10000');
      expect(lines).toEqual([
        {
          level: 'warn',
          message: 'token refused',
          record: {
            code: 'ERR10000',
            reason: 'signature does not verify',
            correlationId: 'cid-1',
            remoteAddress: '127.0.0.9',
            claimedClientId: 'claimed',
          },
        },
      ]);
      expect(JSON.stringify(lines)).not.toContain(forged);
    });

    it('a claimed client id that is not a short printable string is left out', async () => {
      const { guard, lines } = guardWith(securityConfig(certificate));
      for (const clientId of ['has space', 'x'.repeat(129)]) {
        const forged = mintToken(createSigningKey('100'), { clientId });
        await refusal(guard.check!(request(`Bearer ${forged}`)));
      }
      await refusal(guard.check!(request('Bearer not.a-json.token')));
      expect(lines.map((l) => l.record.claimedClientId)).toEqual([undefined, undefined, undefined]);
    });

    it('a scope mismatch: 403 logged with the verified client; the caller kept for metrics', async () => {
      const { guard, lines } = guardWith(securityConfig(certificate));
      const token = mintToken(primary, { clientId: 'c2', scope: ['write:pets'] });
      const err = await refusal(guard.check!(request(`Bearer ${token}`)));
      expect(err.code).toBe('ERR10005');
      expect(verifiedCallerOf(err)?.clientId).toBe('c2');
      expect(lines).toEqual([
        {
          level: 'warn',
          message: 'scope refused',
          record: {
            code: 'ERR10005',
            reason:
              'Scopes [write:pets] in authorization token and specification scopes [read:pets] are not matched',
            correlationId: 'cid-1',
            remoteAddress: '127.0.0.9',
            clientId: 'c2',
          },
        },
      ]);
    });

    it('a key server that cannot be asked is logged as not checked, after the key store says why', async () => {
      const guard = createRequestGuard({
        config: securityConfig(certificate),
        env: {},
        keySource: { kind: 'kid', fetch: () => Promise.reject(new Error('connect ECONNREFUSED')) },
        logger: { info: () => undefined, warn: (record, msg) => seen.push({ record, msg }) },
      });
      const seen: { record: object; msg: string }[] = [];
      const token = mintToken(createSigningKey('999'), { scope: ['read:pets'] });
      expect((await refusal(guard.check!(request(`Bearer ${token}`)))).code).toBe('ERR20005');
      expect(seen).toEqual([
        {
          msg: 'key look-up failed',
          record: { kid: '999', err: new Error('connect ECONNREFUSED') },
        },
        {
          msg: 'token not checked',
          record: expect.objectContaining({ code: 'ERR20005', reason: 'connect ECONNREFUSED' }),
        },
      ]);
    });
  });

  describe('the audit line of a verified request', () => {
    const token = mintToken(primary, { clientId: 'c1', userId: 'u1', scope: ['read:pets'] });
    const audit = async (overrides: Partial<SecurityConfig>) => {
      const { guard, lines } = guardWith(securityConfig(certificate, overrides));
      await guard.check!(request(`Bearer ${token}`));
      return lines;
    };

    it('holds the whole token with logJwtToken', async () => {
      expect(await audit({ logJwtToken: true, logClientUserScope: false })).toEqual([
        { level: 'info', message: 'jwt verified', record: { jwt: token, correlationId: 'cid-1' } },
      ]);
    });

    it('holds only client_id, user_id and scope with logClientUserScope', async () => {
      expect(await audit({ logJwtToken: false, logClientUserScope: true })).toEqual([
        {
          level: 'info',
          message: 'jwt verified',
          record: { client_id: 'c1', user_id: 'u1', scope: 'read:pets', correlationId: 'cid-1' },
        },
      ]);
    });

    it('is not written when both are off', async () => {
      expect(await audit({ logJwtToken: false, logClientUserScope: false })).toEqual([]);
    });
  });

  describe('enableMockJwt', () => {
    it('gives the issuer even with verification off, and its tokens verify', async () => {
      const off = guardWith(
        securityConfig(certificate, { enableVerifyJwt: false, enableMockJwt: true }),
      );
      expect(off.guard.mockIssuer).toBeInstanceOf(MockTokenIssuer);
      const { guard } = guardWith(securityConfig(certificate, { enableMockJwt: true }));
      const issued = await mockTokenResponse(
        guard.mockIssuer!,
        new URLSearchParams({ scope: 'read:pets write:pets', user_id: 'u9' }),
        `Basic ${Buffer.from('my-client:x').toString('base64')}`,
      );
      expect(issued).toMatchObject({
        token_type: 'bearer',
        expires_in: 600,
        scope: 'read:pets write:pets',
      });
      await expect(guard.check!(request(`Bearer ${issued.access_token}`))).resolves.toMatchObject({
        clientId: 'my-client',
        userId: 'u9',
      });
    });

    it('takes the client from the form without Basic, and a default otherwise', async () => {
      const issuer = new MockTokenIssuer(Date.now);
      const claims = (t: string) =>
        JSON.parse(Buffer.from(t.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
      const fromForm = await mockTokenResponse(
        issuer,
        new URLSearchParams({ client_id: 'form-client' }),
        undefined,
      );
      expect(fromForm.scope).toBeUndefined();
      expect(claims(fromForm.access_token)).toMatchObject({ client_id: 'form-client', scope: [] });
      const bare = await mockTokenResponse(issuer, new URLSearchParams(), 'Basic Og==');
      expect(claims(bare.access_token).client_id).toBe('mock-client');
    });

    it('refuses to be built with NODE_ENV=production', () => {
      expect(() =>
        createRequestGuard({
          config: securityConfig(certificate, { enableMockJwt: true }),
          env: { NODE_ENV: 'production' },
        }),
      ).toThrow(
        'Config error in security.yml at key "enableMockJwt": must be false when NODE_ENV=production (the mock token endpoint is for tests only)',
      );
    });
  });
});

const authorize = (guard: RequestGuard, token: string, requiredScopes: string[] = []) =>
  guard.check!({ authorization: `Bearer ${token}`, scopeToken: undefined, requiredScopes });

describe('createRequestGuard: what security.yml builds', () => {
  beforeEach(() => {
    compactVerify.mockClear();
  });

  it('builds nothing but the mock issuer when verification is off', () => {
    const guard = createRequestGuard({
      config: securityConfig({ '100': '/missing.crt' }, { enableVerifyJwt: false }),
    });
    expect(guard).toEqual({ mockIssuer: undefined });
  });

  it('verifies a token once with enableJwtCache, holding jwt.cacheMaxEntries tokens', async () => {
    const config = securityConfig(certificate, { jwt: { cacheMaxEntries: 1 } as never });
    const guard = createRequestGuard({ config });
    const [a, b] = [mintToken(primary), mintToken(primary)];
    for (const token of [a, a, b, b, a]) await authorize(guard, token);
    expect(compactVerify).toHaveBeenCalledTimes(3);
  });

  it('verifies every time without enableJwtCache', async () => {
    const config = securityConfig(certificate, { enableJwtCache: false });
    const guard = createRequestGuard({ config });
    const token = mintToken(primary);
    for (let i = 0; i < 3; i++) await authorize(guard, token);
    expect(compactVerify).toHaveBeenCalledTimes(3);
  });

  it("verifies the mock issuer's tokens beside the certificates, and they carry the checked aud and iss", async () => {
    const guard = createRequestGuard({
      config: securityConfig(certificate, { enableMockJwt: true }),
      claims: { audience: ['urn:chain:api'], issuer: ['https://issuer'] },
      env: {},
    });
    const { access_token } = await guard.mockIssuer!.issue({ scopes: ['a'] });
    expect(jose.decodeProtectedHeader(access_token)).toEqual({
      alg: 'RS256',
      typ: 'at+jwt',
      kid: 'mock-jwt',
    });
    expect(jose.decodeJwt(access_token)).toMatchObject({
      aud: 'urn:chain:api',
      iss: 'https://issuer',
    });
    const authorized = await authorize(guard, access_token, ['a']);
    expect(authorized!.scopes).toEqual(['a']);
    const claims = { aud: 'urn:chain:api', iss: 'https://issuer' };
    await expect(authorize(guard, mintToken(primary, { claims }))).resolves.toBeDefined();
  });

  it('mock tokens are RFC 9068 access tokens: jwt.strict takes them', async () => {
    const config = securityConfig(certificate, { enableMockJwt: true });
    const guard = createRequestGuard({
      config: { ...config, jwt: { ...config.jwt, strict: true, maxTokenAgeSeconds: 60 } },
      env: {},
    });
    const { access_token } = await guard.mockIssuer!.issue({ clientId: 'c', scopes: ['a'] });
    expect(jose.decodeJwt(access_token)).toMatchObject({ sub: 'c', client_id: 'c' });
    await expect(authorize(guard, access_token, ['a'])).resolves.toBeDefined();
  });

  it('accepts mock tokens (RS256) even when jwt.algorithms lists only others', async () => {
    const ec = createSigningKey('ec', { type: 'ec' });
    const guard = createRequestGuard({
      config: securityConfig(
        { ec: writeCertificate(ec) },
        { enableMockJwt: true, jwt: { algorithms: ['ES256'] } as never },
      ),
      env: {},
    });
    const { access_token } = await guard.mockIssuer!.issue({});
    await expect(authorize(guard, access_token)).resolves.toBeDefined();
  });

  it('with bootstrapFromKeyService reads no certificate and fetches a JWKS at start', async () => {
    const k = createSigningKey('k');
    const fetch = vi.fn(
      async () => new Map([['k', { material: k.publicKey.export({ format: 'jwk' }) }]]),
    );
    const guard = createRequestGuard({
      config: securityConfig({ '100': '/missing.crt' }, { bootstrapFromKeyService: true }),
      keySource: { kind: 'set', fetch },
    });
    expect(fetch).toHaveBeenCalledTimes(1);
    await expect(authorize(guard, mintToken(k))).resolves.toBeDefined();
    await expect(authorize(guard, mintToken(primary))).rejects.toMatchObject({
      code: 'ERR10000',
    });
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('fetches nothing at start from a key server by kid (light-oauth2 cannot list its keys)', () => {
    const fetch = vi.fn(async () => undefined);
    createRequestGuard({
      config: securityConfig({}, { bootstrapFromKeyService: true }),
      keySource: { kind: 'kid', fetch },
    });
    expect(fetch).not.toHaveBeenCalled();
  });
});
