import { createSigningKey, mintToken } from '@chain/testkit';
import { createAuthorizer } from '../src/authorizer.js';
import { createJwtVerifier } from '../src/jwt-verifier.js';
import { KeyStore } from '../src/key-store.js';
import { StatusError } from '@chain/errors';
import { keyMap, manualClock } from './helpers.js';

const primary = createSigningKey('100');
const stranger = createSigningKey('100');
const T0 = 1_700_000_000_000;
const clock = manualClock(T0);
const verify = createJwtVerifier({
  keys: new KeyStore(keyMap([primary]), { now: clock.now }),
  clockSkewInSeconds: 60,
  now: clock.now,
});
const bearer = (token: string) => `Bearer ${token}`;
const token = (scope: string[], extra: { expiresIn?: number; clientId?: string } = {}) =>
  mintToken(primary, { now: T0, scope, clientId: 'client-a', userId: 'user-1', ...extra });
const expired = () => mintToken(primary, { now: T0 - 3_600_000, expiresIn: 600 });

async function answer(
  authorize: ReturnType<typeof createAuthorizer>,
  authorization: string | undefined,
  scopeToken?: string,
  requiredScopes: string[] = ['api_a.r', 'api_a.w'],
) {
  try {
    const authorized = await authorize({ authorization, scopeToken, requiredScopes });
    return { ok: authorized!.auth };
  } catch (err) {
    const e = err as StatusError;
    return { status: e.statusCode, body: e.body, headers: e.headers };
  }
}

describe('createAuthorizer with scope verification', () => {
  const authorize = createAuthorizer(verify, { enableVerifyScope: true });

  it('passes a token holding any one required scope and says who called', async () => {
    const result = await answer(authorize, bearer(token(['api_a.w'])));
    expect(result.ok).toMatchObject({
      clientId: 'client-a',
      userId: 'user-1',
      scopes: ['api_a.w'],
    });
    expect(result.ok!.claims.client_id).toBe('client-a');
  });

  it('passes any token when the operation lists no scope', async () => {
    const result = await answer(authorize, bearer(token([])), undefined, []);
    expect(result.ok).toBeDefined();
  });

  it('ERR10002 without a bearer token', async () => {
    for (const header of [undefined, 'Basic abc', 'Bearer', 'Bearer a b']) {
      const result = await answer(authorize, header);
      expect(result.body?.code).toBe('ERR10002');
      expect(result.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="api"' });
    }
  });

  it('ERR10000 for a token that does not verify', async () => {
    const result = await answer(authorize, bearer(mintToken(stranger, { now: T0 })));
    expect(result).toEqual({
      status: 401,
      body: {
        statusCode: 401,
        code: 'ERR10000',
        message: 'INVALID_AUTH_TOKEN',
        description: 'Incorrect signature or malformed token in authorization header',
      },
      headers: {
        'WWW-Authenticate':
          'Bearer realm="api", error="invalid_token", error_description="Incorrect signature or malformed token in authorization header"',
      },
    });
  });

  it('ERR10001 for an expired token', async () => {
    const result = await answer(authorize, bearer(expired()));
    expect(result.body?.code).toBe('ERR10001');
    expect(result.status).toBe(401);
  });

  it('ERR10005 when the token holds none of the scopes, with the scopes in body and challenge', async () => {
    const result = await answer(authorize, bearer(token(['api_b.r', 'api_b.w'])));
    expect(result).toEqual({
      status: 403,
      body: {
        statusCode: 403,
        code: 'ERR10005',
        message: 'AUTH_TOKEN_SCOPE_MISMATCH',
        description:
          'Scopes [api_b.r, api_b.w] in authorization token and specification scopes [api_a.r, api_a.w] are not matched',
      },
      headers: {
        'WWW-Authenticate':
          'Bearer realm="api", error="insufficient_scope", error_description="Scopes [api_b.r, api_b.w] in authorization token and specification scopes [api_a.r, api_a.w] are not matched", scope="api_a.r api_a.w"',
      },
    });
  });

  describe('X-Scope-Token', () => {
    it("matches the scope token's scopes instead of the main token's", async () => {
      const result = await answer(
        authorize,
        bearer(token(['api_b.r'])),
        bearer(token(['api_a.r'], { clientId: 'client-b' })),
      );
      expect(result.ok).toMatchObject({
        clientId: 'client-a',
        scopes: ['api_b.r'],
        scopeToken: { clientId: 'client-b', scopes: ['api_a.r'] },
      });
    });

    it('ERR10006 when the scope token holds none of the scopes', async () => {
      const result = await answer(
        authorize,
        bearer(token(['api_a.r'])),
        bearer(token(['api_x.r'])),
      );
      expect(result.status).toBe(403);
      expect(result.body).toEqual({
        statusCode: 403,
        code: 'ERR10006',
        message: 'SCOPE_TOKEN_SCOPE_MISMATCH',
        description:
          'Scopes [api_x.r] in scope token and specification scopes [api_a.r, api_a.w] are not matched',
      });
      expect(result.headers!['WWW-Authenticate']).toMatch(
        /error="insufficient_scope".*scope="api_a.r api_a.w"$/,
      );
    });

    it('ERR10003 for a scope token that does not verify or is not a bearer value', async () => {
      for (const scopeToken of [
        bearer(mintToken(stranger, { now: T0 })),
        'Basic x',
        bearer('a.b.c'),
      ]) {
        const result = await answer(authorize, bearer(token(['api_a.r'])), scopeToken);
        expect(result.body?.code).toBe('ERR10003');
        expect(result.headers!['WWW-Authenticate']).toBe(
          'Bearer realm="api", error="invalid_token", error_description="Incorrect signature or malformed token in X-Scope-Token header"',
        );
      }
    });

    it('ERR10004 for an expired scope token', async () => {
      const result = await answer(authorize, bearer(token(['api_a.r'])), bearer(expired()));
      expect(result.body).toEqual({
        statusCode: 401,
        code: 'ERR10004',
        message: 'SCOPE_TOKEN_EXPIRED',
        description: 'Jwt token in X-Scope-Token expired',
      });
    });

    it('checks the main token first', async () => {
      const result = await answer(authorize, bearer(expired()), bearer('junk'));
      expect(result.body?.code).toBe('ERR10001');
    });
  });
});

describe('createAuthorizer without scope verification', () => {
  const authorize = createAuthorizer(verify, { enableVerifyScope: false });

  it('ignores scopes and the X-Scope-Token', async () => {
    const result = await answer(authorize, bearer(token(['other'])), 'garbage');
    expect(result.ok).toMatchObject({ clientId: 'client-a', scopes: ['other'] });
    expect(result.ok!.scopeToken).toBeUndefined();
  });

  it('still verifies the token', async () => {
    expect((await answer(authorize, bearer(expired()))).body?.code).toBe('ERR10001');
  });
});

describe('errors that are not token errors', () => {
  it('are passed on unchanged', async () => {
    const boom = new Error('boom');
    const authorize = createAuthorizer(() => Promise.reject(boom), { enableVerifyScope: true });
    await expect(
      authorize({ authorization: 'Bearer x', scopeToken: undefined, requiredScopes: [] }),
    ).rejects.toBe(boom);
  });
});

describe('light-4j request rules', () => {
  it('skipPathPrefixes: a path at or below a prefix is not verified at all', async () => {
    const authorize = createAuthorizer(verify, {
      enableVerifyScope: true,
      skipPathPrefixes: ['/public', '/v1/open/'],
    });
    const ask = (path: string) =>
      authorize({ authorization: undefined, scopeToken: undefined, requiredScopes: ['x'], path });
    await expect(ask('/public')).resolves.toBeUndefined();
    await expect(ask('/public/docs')).resolves.toBeUndefined();
    await expect(ask('/v1/open/x')).resolves.toBeUndefined();
    // whole segments only: a near miss is verified (and here has no token)
    await expect(ask('/publicity')).rejects.toMatchObject({ code: 'ERR10002' });
    await expect(ask('/v1/openx')).rejects.toMatchObject({ code: 'ERR10002' });
  });

  it('passThroughClaims: the verified claims become headers', async () => {
    const authorize = createAuthorizer(verify, {
      enableVerifyScope: true,
      passThroughClaims: { client_id: 'X-Client-Id', scope: 'X-Scopes', missing: 'X-Missing' },
    });
    const result = await answer(authorize, bearer(token(['api_a.r', 'extra'])));
    expect(result.ok!.passThrough).toEqual({
      'x-client-id': 'client-a',
      'x-scopes': 'api_a.r extra',
    });
  });

  it('actorPaths: only a token whose act chain (RFC 8693 4.1) is one of them; else 403 ERR10067', async () => {
    const authorize = createAuthorizer(verify, {
      enableVerifyScope: true,
      actorPaths: ['api-c-client  api-b-client api-a-client', 'api-x'],
    });
    const acted = (act: unknown) =>
      mintToken(primary, { now: T0, scope: ['api_a.r'], claims: { act } });
    const chain = {
      sub: 'api-c-client',
      act: { sub: 'api-b-client', act: { sub: 'api-a-client' } },
    };
    expect((await answer(authorize, bearer(acted(chain)))).ok).toBeDefined();
    expect((await answer(authorize, bearer(acted({ sub: 'api-x' })))).ok).toBeDefined();
    const refusedBody = {
      statusCode: 403,
      code: 'ERR10067',
      message: 'ACCESS_CONTROL_ERROR',
      description: 'Failed to pass the fine-grained authorization with rule actorPaths.',
    };
    for (const act of [
      undefined,
      { sub: 'api-c-client', act: { sub: 'api-b-client' } },
      {
        sub: 'api-c-client',
        act: { sub: 'api-b-client', act: { sub: 'api-a-client', act: { sub: 'more' } } },
      },
      { sub: 'api-b-client', act: { sub: 'api-c-client', act: { sub: 'api-a-client' } } },
      'api-x',
      { sub: 7 },
    ]) {
      const result = await answer(authorize, bearer(acted(act)));
      expect({ act, status: result.status, body: result.body }).toEqual({
        act,
        status: 403,
        body: refusedBody,
      });
    }
  });

  it('enableExtractScopeToken false: the X-Scope-Token is neither verified nor matched', async () => {
    const authorize = createAuthorizer(verify, {
      enableVerifyScope: true,
      enableExtractScopeToken: false,
    });
    const passes = await answer(authorize, bearer(token(['api_a.r'])), 'Bearer junk');
    expect(passes.ok!.scopeToken).toBeUndefined();
    // the main token's scopes decide
    const refused = await answer(
      authorize,
      bearer(token(['other'])),
      bearer(token(['api_a.r'], { clientId: 'caller' })),
    );
    expect(refused.body?.code).toBe('ERR10005');
  });

  it('a request without a spec operation: ERR10007, or no scope check with skipVerifyScopeWithoutSpec', async () => {
    const strict = createAuthorizer(verify, { enableVerifyScope: true });
    const request = {
      authorization: bearer(token(['other'])),
      scopeToken: undefined,
      requiredScopes: undefined,
      path: '/gateway/x',
    };
    await expect(strict(request)).rejects.toMatchObject({
      statusCode: 404,
      body: {
        statusCode: 404,
        code: 'ERR10007',
        message: 'INVALID_REQUEST_PATH',
        description: 'Request path /gateway/x cannot be found in the spec.',
      },
    });
    const lenient = createAuthorizer(verify, {
      enableVerifyScope: true,
      skipVerifyScopeWithoutSpec: true,
    });
    await expect(lenient(request)).resolves.toMatchObject({ auth: { clientId: 'client-a' } });
    // the token is still verified
    await expect(lenient({ ...request, authorization: bearer(expired()) })).rejects.toMatchObject({
      code: 'ERR10001',
    });
    await expect(strict({ ...request, path: undefined })).rejects.toMatchObject({
      body: { description: 'Request path  cannot be found in the spec.' },
    });
  });
});
