import type { ClaimChecks } from '../src/claims.js';
import { StatusError } from '@chain/errors';
import {
  createDpopKey,
  createSigningKey,
  dpopBound,
  dpopProof,
  mintToken,
  writeCertificate,
} from '@chain/testkit';
import { verifiedCallerOf } from '../src/authorizer.js';
import type { Introspected, IntrospectionSource } from '../src/introspection.js';
import { createRequestGuard, type GuardRequest } from '../src/request-guard.js';
import type { SecurityConfig } from '../src/security-config.js';
import { securityConfig } from './helpers.js';

// security.yml enableVerifySwt: opaque tokens by introspection, beside JWTs or alone, through
// the request guard (the source is scripted: the real protocol is
// @chain/oauth-client's introspection client, tested against answers as oidc-provider gives them).

const primary = createSigningKey('100');
const certificate = { '100': writeCertificate(primary) };
const now = Math.floor(Date.now() / 1000);
const dpopKey = createDpopKey();

/** Opaque tokens the scripted introspection server knows as active, with their members. */
const KNOWN: Record<string, Record<string, unknown>> = {
  'opaque-reader': {
    token_type: 'Bearer',
    client_id: 'opaque-app',
    scope: 'read:pets',
    exp: now + 600,
    sub: 'alice',
    user_id: 'alice',
  },
  // oidc-provider's answer about a refresh token, before the token server named its type
  'refresh-token': {
    client_id: 'chain-user',
    scope: 'read:pets',
    exp: now + 86_400,
    sub: 'alice',
  },
  'other-audience': {
    token_type: 'Bearer',
    client_id: 'opaque-app',
    scope: 'read:pets',
    exp: now + 600,
    aud: 'urn:chain:other',
  },
  'opaque-writer': {
    token_type: 'bearer',
    client_id: 'writer-app',
    scope: 'write:pets',
    exp: now + 600,
  },
  'opaque-bound': {
    token_type: 'Bearer',
    client_id: 'bound-app',
    scope: 'read:pets',
    exp: now + 600,
    cnf: { 'x5t#S256': 'thumb-a' },
  },
  'opaque-dpop': {
    token_type: 'DPoP',
    client_id: 'dpop-app',
    scope: 'read:pets',
    exp: now + 600,
    ...dpopBound(dpopKey),
  },
};

function introspectionServer() {
  const asked: string[] = [];
  let down = false;
  const source: IntrospectionSource = {
    introspect: async (token) => {
      asked.push(token);
      if (down) throw new Error('introspection server could not be reached');
      const claims = KNOWN[token];
      const answer: Introspected = claims
        ? { active: true, claims: { active: true, ...claims } }
        : { active: false };
      return answer;
    },
  };
  return { source, asked, stop: () => (down = true) };
}

const config = (overrides: Partial<SecurityConfig> = {}) =>
  securityConfig(certificate, { enableVerifySwt: true, ...overrides });

const request = (token?: string, extra: Partial<GuardRequest> = {}): GuardRequest => ({
  authorization: token === undefined ? undefined : `Bearer ${token}`,
  scopeToken: undefined,
  requiredScopes: ['read:pets'],
  correlationId: 'cid-1',
  ...extra,
});

function guardWith(overrides: Partial<SecurityConfig> = {}, claims?: ClaimChecks) {
  const server = introspectionServer();
  const lines: { record: Record<string, unknown>; msg: string }[] = [];
  const guard = createRequestGuard({
    config: config(overrides),
    claims,
    ownOrigins: () => ['https://petstore:8443'],
    introspection: server.source,
    env: {},
    logger: {
      info: (record, msg) => lines.push({ record: record as never, msg }),
      warn: (record, msg) => lines.push({ record: record as never, msg }),
    },
  });
  return { check: guard.check!, server, lines };
}

const MISMATCH = (header: string) =>
  `Token in ${header} header is bound to a client certificate or DPoP key that the request does not prove`;

const refusal = async (promise: Promise<unknown>) => {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StatusError);
  const { statusCode, body, headers } = err as StatusError;
  return {
    statusCode,
    code: body.code,
    challenge: headers['WWW-Authenticate'],
    error: err as StatusError,
  };
};

describe('opaque tokens (security.yml enableVerifySwt)', () => {
  it('with enableVerifyJwt too: a JWT is verified as one, any other token introspected', async () => {
    const { check, server } = guardWith();
    const jwt = mintToken(primary, { scope: ['read:pets'], clientId: 'jwt-app' });
    expect((await check(request(jwt)))?.clientId).toBe('jwt-app');
    expect(await check(request('opaque-reader'))).toEqual({
      clientId: 'opaque-app',
      userId: 'alice',
      scopes: ['read:pets'],
      claims: { active: true, ...KNOWN['opaque-reader'] },
      passThrough: {},
      introspected: true,
    });
    // "eyJ" and a dot, as light-4j tells them apart, with the eyJ first: a JWT; else opaque
    for (const token of ['ya29.a0Af-opaque', 'abc.eyJhbGciOi']) {
      expect((await refusal(check(request(token)))).code).toBe('ERR10081');
    }
    expect((await refusal(check(request('eyJ-but-no-dot')))).code).toBe('ERR10081');
    expect((await refusal(check(request('eyJhbGciOi.not.a-jwt')))).code).toBe('ERR10000');
    expect(server.asked).toEqual([
      'opaque-reader',
      'ya29.a0Af-opaque',
      'abc.eyJhbGciOi',
      'eyJ-but-no-dot',
    ]);
  });

  it('without enableVerifyJwt: every token is introspected, a JWT too', async () => {
    const { check, server } = guardWith({ enableVerifyJwt: false });
    const jwt = mintToken(primary, { scope: ['read:pets'] });
    expect((await refusal(check(request(jwt)))).code).toBe('ERR10081');
    expect((await check(request('opaque-reader')))?.clientId).toBe('opaque-app');
    expect(server.asked).toEqual([jwt, 'opaque-reader']);
  });

  it('an inactive token is 401 ERR10081 with the RFC 6750 challenge, and a line naming why', async () => {
    const { check, lines } = guardWith();
    expect(await refusal(check(request('revoked-token')))).toMatchObject({
      statusCode: 401,
      code: 'ERR10081',
      challenge:
        'Bearer realm="api", error="invalid_token", error_description="Introspected token is not active: expired, revoked or unknown"',
    });
    expect(lines).toEqual([
      {
        msg: 'token refused',
        record: {
          code: 'ERR10081',
          reason: 'token is not active (introspection)',
          correlationId: 'cid-1',
          traceId: undefined,
          remoteAddress: undefined,
        },
      },
    ]);
  });

  it('an active answer that is not an access token of this service: 401 ERR10081, the line says why', async () => {
    const { check, lines } = guardWith({}, { audience: ['urn:chain:api'] });
    const reasons: unknown[] = [];
    for (const token of ['refresh-token', 'other-audience']) {
      expect(await refusal(check(request(token)))).toMatchObject({
        statusCode: 401,
        code: 'ERR10081',
        challenge:
          'Bearer realm="api", error="invalid_token", error_description="Introspected token is not active: expired, revoked or unknown"',
      });
      reasons.push((lines.pop()?.record as { reason: string }).reason);
    }
    expect(reasons).toEqual([
      'introspection answer names no token_type',
      'aud holds no accepted audience',
    ]);
  });

  it('an unreachable introspection server is 503 ERR10079, no challenge, never a cached "active"', async () => {
    const { check, server } = guardWith();
    server.stop();
    const err = await refusal(check(request('opaque-reader')));
    expect([err.statusCode, err.code, err.challenge]).toEqual([503, 'ERR10079', undefined]);
    expect((err.error.cause as Error).message).toBe('introspection server could not be reached');
  });

  it("scopes come from the answer's scope: a mismatch is 403 ERR10005 with the verified caller", async () => {
    const { check } = guardWith();
    const err = await refusal(check(request('opaque-writer')));
    expect([err.statusCode, err.code, err.error.body.description]).toEqual([
      403,
      'ERR10005',
      'Scopes [write:pets] in authorization token and specification scopes [read:pets] are not matched',
    ]);
    expect(verifiedCallerOf(err.error)?.clientId).toBe('writer-app');
  });

  it('an opaque X-Scope-Token: introspected too; inactive is ERR10003, its scopes are the ones matched (ERR10006)', async () => {
    const { check } = guardWith();
    const jwt = mintToken(primary, { scope: ['other'] });
    expect((await check(request(jwt, { scopeToken: 'Bearer opaque-reader' })))?.scopeToken).toEqual(
      { clientId: 'opaque-app', scopes: ['read:pets'] },
    );
    expect((await refusal(check(request(jwt, { scopeToken: 'Bearer gone' })))).code).toBe(
      'ERR10003',
    );
    expect(
      (await refusal(check(request('opaque-reader', { scopeToken: 'Bearer opaque-writer' })))).code,
    ).toBe('ERR10006');
  });

  // The binding of an answer's cnf is proven as a JWT's is (token-binding.ts, its own tests):
  // these cases show an introspected token goes through the same check, kept answers too.
  it('a certificate-bound answer (cnf x5t#S256) passes only on the connection with that certificate, kept or not: else 401 ERR20012', async () => {
    const { check, server } = guardWith();
    const withCertificate = request('opaque-bound', { clientCertThumbprint: 'thumb-a' });
    expect((await check(withCertificate))?.clientId).toBe('bound-app');
    for (const clientCertThumbprint of ['thumb-b', undefined]) {
      expect(await refusal(check(request('opaque-bound', { clientCertThumbprint })))).toMatchObject(
        {
          statusCode: 401,
          code: 'ERR20012',
          challenge: `Bearer realm="api", error="invalid_token", error_description="${MISMATCH('authorization')}"`,
        },
      );
    }
    expect((await check(withCertificate))?.clientId).toBe('bound-app');
    // As X-Scope-Token: the same code, naming that header.
    const jwt = mintToken(primary, { scope: ['other'] });
    const scoped = request(jwt, { scopeToken: 'Bearer opaque-bound' });
    const err = await refusal(check({ ...scoped, clientCertThumbprint: 'thumb-b' }));
    expect([err.code, err.error.body.description]).toEqual(['ERR20012', MISMATCH('X-Scope-Token')]);
    expect((await check({ ...scoped, clientCertThumbprint: 'thumb-a' }))?.scopeToken).toEqual({
      clientId: 'bound-app',
      scopes: ['read:pets'],
    });
    expect(server.asked).toEqual(['opaque-bound']);
  });

  it('a DPoP-bound answer (cnf jkt) passes with the DPoP scheme and a fresh proof of that key; as Bearer 401 ERR20012, a replayed proof ERR20014', async () => {
    const { check, server } = guardWith();
    const target = { method: 'GET', path: '/v1/pets' };
    const proof = dpopProof(dpopKey, {
      htm: 'GET',
      htu: 'https://petstore:8443/v1/pets',
      accessToken: 'opaque-dpop',
    });
    const dpop = (extra: Partial<GuardRequest>) =>
      request(undefined, { authorization: 'DPoP opaque-dpop', ...target, ...extra });
    expect((await check(dpop({ dpop: proof })))?.clientId).toBe('dpop-app');
    expect((await refusal(check(dpop({ dpop: proof })))).code).toBe('ERR20014');
    const asBearer = await refusal(check(request('opaque-dpop', { ...target, dpop: proof })));
    expect(asBearer).toMatchObject({
      statusCode: 401,
      code: 'ERR20012',
      challenge: `Bearer realm="api", error="invalid_token", error_description="${MISMATCH('authorization')}", DPoP realm="api", algs="ES256 EdDSA PS256 RS256"`,
    });
    // Not active, with the DPoP scheme: ERR10081 with the DPoP challenge.
    expect(await refusal(check(dpop({ authorization: 'DPoP revoked-token' })))).toMatchObject({
      statusCode: 401,
      code: 'ERR10081',
      challenge:
        'DPoP realm="api", error="invalid_token", error_description="Introspected token is not active: expired, revoked or unknown", algs="ES256 EdDSA PS256 RS256", Bearer realm="api"',
    });
    expect(server.asked).toEqual(['opaque-dpop', 'revoked-token']);
  });

  it('passThroughClaims take the members of the answer; the audit line never holds an opaque token', async () => {
    const { check, lines } = guardWith({
      passThroughClaims: { user_id: 'X-User-Id' },
      logClientUserScope: true,
    });
    expect((await check(request('opaque-reader')))?.passThrough).toEqual({ 'x-user-id': 'alice' });
    const jwt = mintToken(primary, { scope: ['read:pets'], clientId: 'jwt-app' });
    await check(request(jwt));
    expect(lines.map((l) => [l.msg, l.record])).toEqual([
      [
        'jwt verified',
        {
          client_id: 'opaque-app',
          user_id: 'alice',
          scope: 'read:pets',
          correlationId: 'cid-1',
          traceId: undefined,
        },
      ],
      [
        'jwt verified',
        {
          jwt,
          client_id: 'jwt-app',
          user_id: undefined,
          scope: 'read:pets',
          correlationId: 'cid-1',
          traceId: undefined,
        },
      ],
    ]);
  });

  it('enableVerifySwt without a source: JWTs only beside enableVerifyJwt; alone, a TypeError at start', async () => {
    const jwtOnly = createRequestGuard({ config: config(), env: {} });
    const err = await jwtOnly.check!({
      authorization: 'Bearer opaque-reader',
      scopeToken: undefined,
      requiredScopes: [],
    }).catch((e: unknown) => e);
    expect((err as StatusError).code).toBe('ERR10000');
    expect(() =>
      createRequestGuard({ config: config({ enableVerifyJwt: false }), env: {} }),
    ).toThrow(
      new TypeError(
        'security.yml enableVerifySwt without enableVerifyJwt needs an introspection source',
      ),
    );
  });
});
