import { StatusError } from '@chain/errors';
import type { ClaimChecks } from '../src/claims.js';
import {
  createIntrospectionVerifier,
  RefusedIntrospectionClient,
  type Introspected,
  type IntrospectionClient,
  type IntrospectionSource,
} from '../src/introspection.js';
import { TokenError } from '../src/token-error.js';
import { deferred, manualClock } from './helpers.js';

const T0 = 1_700_000_000_000;
const EXP = T0 / 1000 + 600;

/** oidc-provider's active answer about a client credentials token. */
const active = (extra: Record<string, unknown> = {}): Introspected => ({
  active: true,
  claims: {
    active: true,
    client_id: 'opaque-app',
    exp: EXP,
    iat: T0 / 1000,
    iss: 'https://localhost:6882',
    aud: 'urn:chain:api',
    scope: 'api_a.r read:pets',
    token_type: 'Bearer',
    ...extra,
  },
});

/** A source answering from a script, recording what it was asked. */
function scriptedSource(
  answer: (token: string, client?: IntrospectionClient) => Promise<Introspected>,
) {
  const asked: { token: string; client?: IntrospectionClient }[] = [];
  const source: IntrospectionSource = {
    introspect: (token, client) => {
      asked.push(client ? { token, client } : { token });
      return answer(token, client);
    },
  };
  return { source, asked };
}

function setup(
  answer: (token: string, client?: IntrospectionClient) => Promise<Introspected>,
  { maxEntries = 100, maxAgeMs = 60_000, requireTokenType = true, checks = {} as ClaimChecks } = {},
) {
  const clock = manualClock(T0);
  const { source, asked } = scriptedSource(answer);
  const swt = {
    cacheMaxEntries: maxEntries,
    cacheMaxAgeSeconds: maxAgeMs / 1000,
    requireTokenType,
  };
  const verify = createIntrospectionVerifier(source, swt, clock.now, checks);
  return { clock, asked, verify };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (err: unknown) => err,
  );

describe('createIntrospectionVerifier', () => {
  it('an active answer is the caller: client_id, user_id, the scopes of scope, exp, the members as claims', async () => {
    const answer = active({ sub: 'alice', user_id: 'alice' });
    const { verify, asked } = setup(async () => answer);
    expect(await verify('opaque-token', {})).toEqual({
      clientId: 'opaque-app',
      userId: 'alice',
      scopes: ['api_a.r', 'read:pets'],
      claims: { ...(answer.active ? answer.claims : {}), sub: 'alice', user_id: 'alice' },
      exp: EXP,
      introspected: true,
    });
    expect(asked).toEqual([{ token: 'opaque-token' }]);
  });

  it('reads what an answer lacks or mistypes as absent, never as a crash', async () => {
    const { verify } = setup(async () => ({
      active: true,
      claims: {
        active: true,
        token_type: 'bearer',
        client_id: 7,
        user_id: ['x'],
        exp: 'soon',
        scope: ['a', 3],
      },
    }));
    expect(await verify('t', {})).toEqual({
      clientId: undefined,
      userId: undefined,
      scopes: ['a'],
      claims: {
        active: true,
        token_type: 'bearer',
        client_id: 7,
        user_id: ['x'],
        exp: 'soon',
        scope: ['a', 3],
      },
      exp: undefined,
      introspected: true,
    });
  });

  it('not active: a TokenError inactive, asked again next time (not kept)', async () => {
    const { verify, asked } = setup(async () => ({ active: false }));
    for (let i = 0; i < 2; i++) {
      const err = (await failure(verify('revoked', {}))) as TokenError;
      expect(err).toBeInstanceOf(TokenError);
      expect([err.code, err.message]).toEqual(['inactive', 'token is not active (introspection)']);
    }
    expect(asked).toHaveLength(2);
  });

  // oidc-provider's answer about a refresh token: active, no token_type, no aud
  const refreshAnswer = (): Introspected => ({
    active: true,
    claims: {
      active: true,
      sub: 'alice',
      client_id: 'chain-user',
      exp: T0 / 1000 + 86_400,
      iat: T0 / 1000,
      iss: 'https://localhost:6882',
      scope: 'read:pets',
    },
  });

  it.each([
    [
      'no token_type (a refresh token)',
      refreshAnswer(),
      'introspection answer names no token_type',
    ],
    [
      'token_type refresh_token',
      active({ token_type: 'refresh_token' }),
      'introspection answer is not for an access token (token_type)',
    ],
    [
      'token_type not a string',
      active({ token_type: ['Bearer'] }),
      'introspection answer is not for an access token (token_type)',
    ],
  ])('%s: refused as inactive (ERR10081), never kept', async (_name, answer, reason) => {
    const { verify, asked } = setup(async () => answer);
    for (let i = 0; i < 2; i++) {
      const err = (await failure(verify('t', {}))) as TokenError;
      expect([err.constructor, err.code, err.message]).toEqual([TokenError, 'inactive', reason]);
    }
    expect(asked).toHaveLength(2);
  });

  it.each(['Bearer', 'bearer', 'DPoP', 'dpop'])('token_type %s is an access token', async (t) => {
    const { verify } = setup(async () => active({ token_type: t }));
    expect(await verify('t', {})).toMatchObject({ clientId: 'opaque-app' });
  });

  it('requireTokenType false: an answer without token_type passes, another type still does not', async () => {
    const lenient = setup(async () => refreshAnswer(), { requireTokenType: false });
    expect(await lenient.verify('t', {})).toMatchObject({ clientId: 'chain-user' });
    const other = setup(async () => active({ token_type: 'refresh_token' }), {
      requireTokenType: false,
    });
    expect(((await failure(other.verify('t', {}))) as TokenError).code).toBe('inactive');
  });

  it('aud and iss as for a JWT: another audience or issuer is refused, a missing one too', async () => {
    const checks = { audience: ['urn:chain:api'], issuer: ['https://localhost:6882'] };
    const outcome = async (extra: Record<string, unknown>) => {
      const { verify } = setup(async () => active(extra), { checks });
      const result = await failure(verify('t', {}));
      return result instanceof TokenError ? result.message : 'accepted';
    };
    expect(await outcome({})).toBe('accepted');
    expect(await outcome({ aud: ['other', 'urn:chain:api'] })).toBe('accepted');
    expect(await outcome({ aud: 'urn:chain:other' })).toBe('aud holds no accepted audience');
    expect(await outcome({ aud: undefined })).toBe('aud holds no accepted audience');
    expect(await outcome({ iss: 'https://evil.example' })).toBe('iss is not an accepted issuer');
    expect(await outcome({ iss: undefined })).toBe('iss is not an accepted issuer');
  });

  it('no answer: 503 ERR10079 with the cause kept; a refused request client: 401 ERR10080', async () => {
    const down = new Error('introspection server https://localhost:6882 could not be reached');
    const { verify } = setup(async (_t, client) => {
      if (client) throw new RefusedIntrospectionClient('refused: invalid_client');
      throw down;
    });
    const unavailable = (await failure(verify('t', {}))) as StatusError;
    expect(unavailable).toBeInstanceOf(StatusError);
    expect([unavailable.statusCode, unavailable.code, unavailable.cause]).toEqual([
      503,
      'ERR10079',
      down,
    ]);
    const refused = (await failure(
      verify('t', { swtClientId: 'c', swtClientSecret: 's' }),
    )) as StatusError;
    expect([refused.statusCode, refused.code]).toEqual([401, 'ERR10080']);
    expect(refused.cause).toBeInstanceOf(RefusedIntrospectionClient);
  });

  it('a token longer than 8192 characters is refused without a call', async () => {
    const { verify, asked } = setup(async () => active());
    const err = (await failure(verify('x'.repeat(8193), {}))) as TokenError;
    expect([err.code, err.message]).toEqual(['invalid', 'token longer than 8192 characters']);
    expect(asked).toEqual([]);
  });

  it("kept until the answer's exp, and no longer than the cache's maximum age", async () => {
    const { verify, asked, clock } = setup(async () => active({ exp: T0 / 1000 + 30 }), {
      maxAgeMs: 60_000,
    });
    await verify('t', {});
    clock.set(T0 + 29_999);
    await verify('t', {});
    expect(asked).toHaveLength(1);
    clock.set(T0 + 30_000);
    await verify('t', {});
    expect(asked).toHaveLength(2);

    const long = setup(async () => active({ exp: undefined }), { maxAgeMs: 5_000 });
    await long.verify('t', {});
    long.clock.set(T0 + 4_999);
    await long.verify('t', {});
    long.clock.set(T0 + 5_000);
    await long.verify('t', {});
    expect(long.asked).toHaveLength(2);
  });

  it('concurrent requests with one token share one introspection', async () => {
    const pending = deferred<Introspected>();
    const { verify, asked } = setup(() => pending.promise);
    const all = Promise.all([1, 2, 3].map(() => verify('t', {})));
    pending.resolve(active());
    expect((await all).map((c) => c.clientId)).toEqual(['opaque-app', 'opaque-app', 'opaque-app']);
    expect(asked).toHaveLength(1);
  });

  it("the request's own client (both headers, once each, not empty) asks instead, and has its own cache entries", async () => {
    const { verify, asked } = setup(async () => active());
    const own = { swtClientId: 'gateway-consumer', swtClientSecret: 'its-secret' };
    await verify('t', own);
    await verify('t', own);
    await verify('t', {}); // the configured client: not the entry of another client
    await verify('t', { ...own, swtClientSecret: 'other-secret' });
    for (const partial of [
      { swtClientId: 'gateway-consumer' },
      { swtClientId: ['a', 'b'], swtClientSecret: 's' },
      { swtClientId: 'a', swtClientSecret: '' },
    ]) {
      await verify('t', partial); // not a request client: the configured one's kept answer
    }
    expect(asked).toEqual([
      { token: 't', client: { clientId: 'gateway-consumer', clientSecret: 'its-secret' } },
      { token: 't' },
      { token: 't', client: { clientId: 'gateway-consumer', clientSecret: 'other-secret' } },
    ]);
  });

  it("reads the binding of the answer's cnf once, kept with the answer (the authorizer has every request prove it)", async () => {
    const { verify, asked } = setup(async (token) =>
      active(token === 'unbound' ? {} : { cnf: JSON.parse(token) as unknown }),
    );
    expect((await verify('unbound', {})).binding).toBeUndefined();
    expect((await verify('{"x5t#S256":"thumb-a"}', {})).binding).toEqual({ x5t: 'thumb-a' });
    expect((await verify('{"jkt":"key-a"}', {})).binding).toEqual({ jkt: 'key-a' });
    expect((await verify('{"jwk":{}}', {})).binding).toEqual({
      problem: 'cnf names a confirmation method other than x5t#S256 and jkt',
    });
    // Kept: the same binding, whatever the request's connection (proving it is not the verifier's).
    const kept = await verify('{"x5t#S256":"thumb-a"}', {});
    expect([kept.binding, kept.clientId]).toEqual([{ x5t: 'thumb-a' }, 'opaque-app']);
    expect(asked).toHaveLength(4);
  });
});
