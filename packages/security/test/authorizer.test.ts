import { createSigningKey, mintToken } from '@chain/testkit';
import { createAuthorizer } from '../src/authorizer';
import { createJwtVerifier } from '../src/jwt-verifier';
import { KeyStore } from '../src/key-store';
import { StatusError } from '../src/status-error';
import { manualClock } from './helpers';

const primary = createSigningKey('100');
const stranger = createSigningKey('100');
const T0 = 1_700_000_000_000;
const clock = manualClock(T0);
const verify = createJwtVerifier({
  keys: new KeyStore(new Map([['100', primary.publicKey]]), { now: clock.now }),
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
    const { auth } = await authorize({ authorization, scopeToken, requiredScopes });
    return { ok: auth };
  } catch (err) {
    const e = err as StatusError;
    return { status: e.statusCode, body: e.body, headers: e.headers };
  }
}

describe('createAuthorizer with scope verification', () => {
  const authorize = createAuthorizer(verify, true);

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
  const authorize = createAuthorizer(verify, false);

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
    const authorize = createAuthorizer(() => Promise.reject(boom), true);
    await expect(
      authorize({ authorization: 'Bearer x', scopeToken: undefined, requiredScopes: [] }),
    ).rejects.toBe(boom);
  });
});
