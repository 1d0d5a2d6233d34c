import * as jose from 'jose';
import type { Mock } from 'vitest';
import {
  certificateBound,
  createDpopKey,
  createSigningKey,
  dpopBound,
  dpopProof,
  jwkThumbprint,
  mintToken,
  writeCertificate,
  type Claims,
  type DpopKey,
} from '@chain/testkit';
import { StatusError } from '@chain/errors';
import { createRequestGuard, type GuardRequest } from '../src/request-guard.js';
import type { SecurityConfig } from '../src/security-config.js';
import { bindingOf } from '../src/claims.js';
import { createTokenBinding } from '../src/token-binding.js';
import { createAuthorizer } from '../src/authorizer.js';
import { HTU, KEYS, PROOF_CASES } from './dpop-cases.js';
import { manualClock, recordedEvents, securityConfig } from './helpers.js';

// jose's compactVerify, counted: the cache spares it, the binding is checked all the same.
vi.mock('jose', async (original) => (await import('./counted-jose.js')).countedJose(original));

// The binding of sender-constrained tokens through the request guard, as the runtime calls it:
// RFC 8705 certificate-bound and RFC 9449 DPoP-bound tokens in Authorization and X-Scope-Token,
// cached and not, each refusal with its status, body and WWW-Authenticate, and its log reason.

const signer = createSigningKey('100');
const certificate = { '100': writeCertificate(signer) };
const T0 = 1_700_000_000_000;
const CERT_A = 'A'.repeat(43);
const CERT_B = 'B'.repeat(43);
const ALGS = 'algs="ES256 EdDSA PS256 RS256"';

/** The origins api-b knows it is reached at, as the runtime gives them. */
const OWN_ORIGINS = ['https://api-b:7442', 'https://localhost:7442'];

function guardWith(overrides: Partial<SecurityConfig> = {}, ownOrigins = OWN_ORIGINS) {
  const clock = manualClock(T0);
  const { events: logger, lines } = recordedEvents();
  const guard = createRequestGuard({
    config: securityConfig(certificate, overrides),
    env: {},
    now: clock.now,
    logger,
    ownOrigins: () => ownOrigins,
  });
  const check = guard.check!;
  return { check, clock, lines };
}

/** The refusal lines (the audit lines of verified requests left out). */
const refusals = (lines: ReturnType<typeof recordedEvents>['lines']) =>
  lines.filter((l) => l.level === 'warn');

const token = (claims: Claims, scope: string[] = ['read:pets']) =>
  mintToken(signer, { now: T0, scope, clientId: 'caller', claims });

/** A request to GET https://api-b:7442/v1/data. */
const request = (extra: Partial<GuardRequest>): GuardRequest => ({
  authorization: undefined,
  scopeToken: undefined,
  requiredScopes: ['read:pets'],
  method: 'GET',
  path: '/v1/data',
  ...extra,
});

const proofFor = (
  key: DpopKey,
  accessToken: string,
  extra: Partial<Parameters<typeof dpopProof>[1]> = {},
) => dpopProof(key, { htm: 'GET', htu: HTU, accessToken, now: T0, ...extra });

/** The refusal a check rejects with: status, body and headers together. */
async function refusal(promise: Promise<unknown>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StatusError);
  const e = err as StatusError;
  return { status: e.statusCode, body: e.body, headers: e.headers };
}

const body = (code: string, message: string, description: string) => ({
  statusCode: 401,
  code,
  message,
  description,
});
const MISMATCH = (header = 'authorization') =>
  body(
    'ERR20012',
    'TOKEN_BINDING_MISMATCH',
    `Token in ${header} header is bound to a client certificate or DPoP key that the request does not prove`,
  );
const BAD_PROOF = (header = 'authorization') =>
  body(
    'ERR20013',
    'INVALID_DPOP_PROOF',
    `DPoP proof of the token in ${header} header is missing or invalid`,
  );
const REPLAYED = (header = 'authorization') =>
  body(
    'ERR20014',
    'DPOP_PROOF_REPLAYED',
    `DPoP proof of the token in ${header} header was already used`,
  );

/** RFC 6750's challenge of a 401, as every Bearer refusal has it. */
const bearerChallenge = (description: string) =>
  `Bearer realm="api", error="invalid_token", error_description="${description}"`;
/** RFC 9449's challenge of a refusal of a token sent with the DPoP scheme, then Bearer's. */
const dpopChallenge = (error: string, description: string) =>
  `DPoP realm="api", error="${error}", error_description="${description}", ${ALGS}, Bearer realm="api"`;

describe('certificate-bound tokens (RFC 8705 cnf x5t#S256)', () => {
  const bound = token(certificateBound(CERT_A));
  const refused = {
    status: 401,
    body: MISMATCH(),
    headers: { 'WWW-Authenticate': bearerChallenge(MISMATCH().description) },
  };

  it('pass on a connection with that certificate, are refused on any other or none: cached', async () => {
    const { check, lines } = guardWith();
    const verifies = jose.compactVerify as Mock;
    verifies.mockClear();
    await expect(
      check(request({ authorization: `Bearer ${bound}`, clientCertThumbprint: CERT_A })),
    ).resolves.toMatchObject({ clientId: 'caller' });
    // Cache hits from here on: the binding is checked on every one.
    expect(
      await refusal(
        check(request({ authorization: `Bearer ${bound}`, clientCertThumbprint: CERT_B })),
      ),
    ).toEqual(refused);
    expect(await refusal(check(request({ authorization: `Bearer ${bound}` })))).toEqual(refused);
    await expect(
      check(request({ authorization: `Bearer ${bound}`, clientCertThumbprint: CERT_A })),
    ).resolves.toMatchObject({ clientId: 'caller' });
    expect(verifies).toHaveBeenCalledTimes(1);
    expect(
      lines
        .filter((l) => l.level === 'warn')
        .map((l) => [l.message, l.record.code, l.record.reason]),
    ).toEqual([
      ['token refused', 'ERR20012', 'client certificate is not the one the token is bound to'],
      [
        'token refused',
        'ERR20012',
        'certificate-bound token on a connection without a client certificate',
      ],
    ]);
    expect(JSON.stringify(refusals(lines))).not.toContain(bound);
  });

  it('are refused with another certificate before they were ever verified (cache off)', async () => {
    const { check } = guardWith({ enableJwtCache: false });
    expect(
      await refusal(
        check(request({ authorization: `Bearer ${bound}`, clientCertThumbprint: CERT_B })),
      ),
    ).toEqual(refused);
    await expect(
      check(request({ authorization: `Bearer ${bound}`, clientCertThumbprint: CERT_A })),
    ).resolves.toBeDefined();
  });

  it('in X-Scope-Token: checked against the same connection, refused naming the header', async () => {
    const { check } = guardWith();
    const main = token({}, []);
    const scoped = token(certificateBound(CERT_A));
    await expect(
      check(
        request({
          authorization: `Bearer ${main}`,
          scopeToken: `Bearer ${scoped}`,
          clientCertThumbprint: CERT_A,
        }),
      ),
    ).resolves.toMatchObject({ scopeToken: { clientId: 'caller', scopes: ['read:pets'] } });
    expect(
      await refusal(
        check(
          request({
            authorization: `Bearer ${main}`,
            scopeToken: `Bearer ${scoped}`,
            clientCertThumbprint: CERT_B,
          }),
        ),
      ),
    ).toEqual({
      status: 401,
      body: MISMATCH('X-Scope-Token'),
      headers: { 'WWW-Authenticate': bearerChallenge(MISMATCH('X-Scope-Token').description) },
    });
  });

  it('a connection certificate changes nothing for an unbound token', async () => {
    const { check } = guardWith();
    await expect(
      check(request({ authorization: `Bearer ${token({})}`, clientCertThumbprint: CERT_B })),
    ).resolves.toBeDefined();
  });
});

describe('DPoP-bound tokens (RFC 9449 cnf jkt)', () => {
  const key = KEYS.ec;
  const bound = token(dpopBound(key));
  const dpop = (proof: string | string[] | undefined, extra: Partial<GuardRequest> = {}) =>
    request({ authorization: `DPoP ${bound}`, dpop: proof, ...extra });

  it('pass with a fresh proof each time; a proof used again is ERR20014', async () => {
    const { check, lines } = guardWith();
    const first = proofFor(key, bound);
    await expect(check(dpop(first))).resolves.toMatchObject({ clientId: 'caller' });
    expect(await refusal(check(dpop(first)))).toEqual({
      status: 401,
      body: REPLAYED(),
      headers: {
        'WWW-Authenticate': dpopChallenge('invalid_dpop_proof', REPLAYED().description),
      },
    });
    // The token is cached now; a fresh proof passes, a missing one does not.
    await expect(check(dpop(proofFor(key, bound)))).resolves.toBeDefined();
    expect(await refusal(check(dpop(undefined)))).toEqual({
      status: 401,
      body: BAD_PROOF(),
      headers: {
        'WWW-Authenticate': dpopChallenge('invalid_dpop_proof', BAD_PROOF().description),
      },
    });
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.record.reason)).toEqual([
      'DPoP proof jti already used',
      'no DPoP proof header',
    ]);
  });

  it.each(PROOF_CASES.map((c) => [c.name, c] as const))(
    'a proof failing check %s: 401 ERR20013, invalid_dpop_proof',
    async (_, c) => {
      const { check, lines } = guardWith();
      expect(await refusal(check(dpop(c.header(bound, T0))))).toEqual({
        status: 401,
        body: BAD_PROOF(),
        headers: {
          'WWW-Authenticate': dpopChallenge('invalid_dpop_proof', BAD_PROOF().description),
        },
      });
      expect(lines).toEqual([
        {
          level: 'warn',
          message: 'token refused',
          record: expect.objectContaining({
            code: 'ERR20013',
            reason: c.reason,
            claimedClientId: 'caller',
          }),
        },
      ]);
    },
  );

  it('a DPoP-bound token sent as Bearer: ERR20012, the Bearer error and the DPoP challenge', async () => {
    const { check, lines } = guardWith();
    for (const proof of [undefined, proofFor(key, bound)]) {
      expect(
        await refusal(check(request({ authorization: `Bearer ${bound}`, dpop: proof }))),
      ).toEqual({
        status: 401,
        body: MISMATCH(),
        headers: {
          'WWW-Authenticate': `${bearerChallenge(MISMATCH().description)}, DPoP realm="api", ${ALGS}`,
        },
      });
    }
    expect(lines.map((l) => l.record.reason)).toEqual([
      'DPoP-bound token sent as Bearer',
      'DPoP-bound token sent as Bearer',
    ]);
  });

  it("a valid proof of another key: ERR20012, invalid_token (RFC 9449's Invalid DPoP key binding)", async () => {
    const { check, lines } = guardWith();
    expect(await refusal(check(dpop(proofFor(createDpopKey(), bound))))).toEqual({
      status: 401,
      body: MISMATCH(),
      headers: { 'WWW-Authenticate': dpopChallenge('invalid_token', MISMATCH().description) },
    });
    expect(lines[0].record.reason).toBe(
      'DPoP proof is signed by another key than the token is bound to',
    );
  });

  it('the DPoP scheme with a token not bound to a key: ERR20012', async () => {
    const { check, lines } = guardWith();
    for (const unbound of [token({}), token(certificateBound(CERT_A))]) {
      expect(
        await refusal(
          check(
            request({
              authorization: `DPoP ${unbound}`,
              dpop: proofFor(key, unbound),
              clientCertThumbprint: CERT_A,
            }),
          ),
        ),
      ).toEqual({
        status: 401,
        body: MISMATCH(),
        headers: { 'WWW-Authenticate': dpopChallenge('invalid_token', MISMATCH().description) },
      });
    }
    expect(lines.map((l) => l.record.reason)).toEqual([
      'DPoP scheme for a token not bound to a key',
      'DPoP scheme for a token not bound to a key',
    ]);
  });

  it("the token's own refusals (expired, forged, scopes) carry the DPoP challenge", async () => {
    const { check } = guardWith();
    const expired = mintToken(signer, { now: T0 - 3_600_000, claims: dpopBound(key) });
    const description = 'Jwt token in authorization header expired';
    expect(
      await refusal(
        check(request({ authorization: `DPoP ${expired}`, dpop: proofFor(key, expired) })),
      ),
    ).toEqual({
      status: 401,
      body: body('ERR10001', 'AUTH_TOKEN_EXPIRED', description),
      headers: { 'WWW-Authenticate': dpopChallenge('invalid_token', description) },
    });
    const forged = mintToken(createSigningKey('100'), { now: T0, claims: dpopBound(key) });
    const invalid = 'Incorrect signature or malformed token in authorization header';
    expect(
      (
        await refusal(
          check(request({ authorization: `DPoP ${forged}`, dpop: proofFor(key, forged) })),
        )
      ).headers,
    ).toEqual({ 'WWW-Authenticate': dpopChallenge('invalid_token', invalid) });
    const writer = token(dpopBound(key), ['write:pets']);
    expect(
      await refusal(
        check(request({ authorization: `DPoP ${writer}`, dpop: proofFor(key, writer) })),
      ),
    ).toEqual({
      status: 403,
      body: {
        statusCode: 403,
        code: 'ERR10005',
        message: 'AUTH_TOKEN_SCOPE_MISMATCH',
        description:
          'Scopes [write:pets] in authorization token and specification scopes [read:pets] are not matched',
      },
      headers: {
        'WWW-Authenticate':
          'DPoP realm="api", error="insufficient_scope", error_description="Scopes [write:pets] in authorization token and specification scopes [read:pets] are not matched", scope="read:pets", ' +
          `${ALGS}, Bearer realm="api"`,
      },
    });
  });

  it('a token bound to a certificate and a key needs both', async () => {
    const { check } = guardWith();
    const both = token({ cnf: { 'x5t#S256': CERT_A, jkt: key.thumbprint } });
    const req = (cert: string | undefined) =>
      request({
        authorization: `DPoP ${both}`,
        dpop: proofFor(key, both),
        clientCertThumbprint: cert,
      });
    await expect(check(req(CERT_A))).resolves.toBeDefined();
    expect((await refusal(check(req(CERT_B)))).body).toEqual(MISMATCH());
    expect(
      (
        await refusal(
          check(request({ authorization: `Bearer ${both}`, clientCertThumbprint: CERT_A })),
        )
      ).body,
    ).toEqual(MISMATCH());
  });

  it('a stray DPoP header beside an unbound Bearer token is not read', async () => {
    const { check } = guardWith();
    await expect(
      check(request({ authorization: `Bearer ${token({})}`, dpop: 'not a proof' })),
    ).resolves.toBeDefined();
  });

  it("htu: one of the service's own origins (default port or not, any case), never what a header says", async () => {
    const { check } = guardWith({}, ['https://api-b:7442', 'http://api-b:7080', 'https://api-b']);
    const via = (htu: string) => check(dpop(proofFor(key, bound, { htu })));
    await expect(via('https://api-b:7442/v1/data')).resolves.toBeDefined();
    await expect(via('http://api-b:7080/v1/data')).resolves.toBeDefined();
    await expect(via('HTTPS://API-B:443/v1/data')).resolves.toBeDefined();
    for (const htu of ['http://api-b:7442/v1/data', 'https://api-c:7442/v1/data']) {
      expect((await refusal(via(htu))).body).toEqual(BAD_PROOF());
    }
  });

  it("a proof for another service's origin, with a Host naming that origin: 401 ERR20013 while the scope allows it", async () => {
    const { check, lines } = guardWith();
    const forApiA = proofFor(key, bound, { htu: 'https://localhost:7441/v1/data' });
    // the request as it reaches api-b: whatever Host, X-Forwarded-Host or Forwarded it carries,
    // the guard is given none of them
    const answer = await refusal(check(dpop(forApiA)));
    expect(answer.body).toEqual(BAD_PROOF());
    expect(refusals(lines).at(-1)!.record.reason).toBe('htu is not the request URI');
    // the same token with a proof for api-b itself passes: only the htu was wrong
    await expect(check(dpop(proofFor(key, bound, { now: T0 + 1 })))).resolves.toBeDefined();
  });

  it('htu with user info names another URI (RFC 3986): refused, not normalised away', async () => {
    const { check } = guardWith();
    for (const htu of [
      'https://someone@api-b:7442/v1/data',
      'https://someone:pw@api-b:7442/v1/data',
      'https://@api-b:7442/v1/data',
      'https:api-b:7442/v1/data',
      'https:\\\\api-b:7442/v1/data',
      'https://api-b:7442/v1\\data',
      'https://api-b:7442/v1/da ta',
    ]) {
      expect((await refusal(check(dpop(proofFor(key, bound, { htu }))))).body).toEqual(BAD_PROOF());
    }
  });

  it('no dpop.origins and no own origins: every proof refused', async () => {
    const { check } = guardWith({}, []);
    expect((await refusal(check(dpop(proofFor(key, bound))))).body).toEqual(BAD_PROOF());
  });

  it('past dpop.replayCacheMaxEntries a forgotten jti is refused as too old, never let through', async () => {
    const { check, lines } = guardWith({
      dpop: { replayCacheMaxEntries: 1 } as SecurityConfig['dpop'],
    });
    const first = proofFor(key, bound);
    await expect(check(dpop(first))).resolves.toBeDefined();
    await expect(check(dpop(proofFor(key, bound, { now: T0 + 1000 })))).resolves.toBeDefined();
    expect((await refusal(check(dpop(first)))).body).toEqual(BAD_PROOF());
    expect(refusals(lines)[0].record.reason).toBe(
      'proof older than the replay cache remembers (dpop.replayCacheMaxEntries)',
    );
  });

  it('the replay window follows the clock: a jti is remembered for the life of its proof', async () => {
    const { check, clock } = guardWith({
      dpop: { iatWindowSeconds: 5 } as SecurityConfig['dpop'],
    });
    const first = proofFor(key, bound);
    await expect(check(dpop(first))).resolves.toBeDefined();
    clock.advance(5_000);
    expect((await refusal(check(dpop(first)))).body).toEqual(REPLAYED());
    clock.advance(1_000);
    // Past its window the proof is refused by its iat.
    expect((await refusal(check(dpop(first)))).body).toEqual(BAD_PROOF());
  });
});

describe('DPoP-bound X-Scope-Token (X-Scope-Token: DPoP <token>, X-Scope-Token-DPoP: <proof>)', () => {
  const hopKey = KEYS.ed25519;
  const main = token({}, []);
  const scoped = token(dpopBound(hopKey));
  const withScope = (extra: Partial<GuardRequest>) =>
    request({ authorization: `Bearer ${main}`, scopeToken: `DPoP ${scoped}`, ...extra });

  it("passes with its own proof in X-Scope-Token-DPoP (ath of the scope token, this request's htm and htu)", async () => {
    const { check } = guardWith();
    await expect(
      check(withScope({ scopeTokenDpop: proofFor(hopKey, scoped) })),
    ).resolves.toMatchObject({ scopeToken: { scopes: ['read:pets'] } });
  });

  it('beside a DPoP-bound Authorization: one proof each, each with its own ath', async () => {
    const { check } = guardWith();
    const user = token(dpopBound(KEYS.ec), []);
    const req = (dpop: string, scopeTokenDpop: string) =>
      request({
        authorization: `DPoP ${user}`,
        dpop,
        scopeToken: `DPoP ${scoped}`,
        scopeTokenDpop,
      });
    await expect(
      check(req(proofFor(KEYS.ec, user), proofFor(hopKey, scoped))),
    ).resolves.toBeDefined();
    // The proofs swapped: each is signed by the other token's key and hashes the other token.
    expect(await refusal(check(req(proofFor(hopKey, scoped), proofFor(KEYS.ec, user))))).toEqual({
      status: 401,
      body: BAD_PROOF(),
      headers: { 'WWW-Authenticate': dpopChallenge('invalid_dpop_proof', BAD_PROOF().description) },
    });
  });

  it('refusals name X-Scope-Token: no proof, a proof in DPoP only, a replay, sent as Bearer', async () => {
    const { check, lines } = guardWith();
    const scopeChallenge = (error: string, b: { description: string }) => ({
      'WWW-Authenticate': dpopChallenge(error, b.description),
    });
    expect(await refusal(check(withScope({})))).toEqual({
      status: 401,
      body: BAD_PROOF('X-Scope-Token'),
      headers: scopeChallenge('invalid_dpop_proof', BAD_PROOF('X-Scope-Token')),
    });
    expect(await refusal(check(withScope({ dpop: proofFor(hopKey, scoped) })))).toEqual({
      status: 401,
      body: BAD_PROOF('X-Scope-Token'),
      headers: scopeChallenge('invalid_dpop_proof', BAD_PROOF('X-Scope-Token')),
    });
    const proof = proofFor(hopKey, scoped);
    await expect(check(withScope({ scopeTokenDpop: proof }))).resolves.toBeDefined();
    expect(await refusal(check(withScope({ scopeTokenDpop: proof })))).toEqual({
      status: 401,
      body: REPLAYED('X-Scope-Token'),
      headers: scopeChallenge('invalid_dpop_proof', REPLAYED('X-Scope-Token')),
    });
    expect(
      await refusal(
        check(
          withScope({ scopeToken: `Bearer ${scoped}`, scopeTokenDpop: proofFor(hopKey, scoped) }),
        ),
      ),
    ).toEqual({
      status: 401,
      body: MISMATCH('X-Scope-Token'),
      headers: {
        'WWW-Authenticate': `${bearerChallenge(MISMATCH('X-Scope-Token').description)}, DPoP realm="api", ${ALGS}`,
      },
    });
    expect(refusals(lines).map((l) => l.record.code)).toEqual([
      'ERR20013',
      'ERR20013',
      'ERR20014',
      'ERR20012',
    ]);
  });

  it('its scope mismatch carries the DPoP challenge of its scheme', async () => {
    const { check } = guardWith();
    const writer = token(dpopBound(hopKey), ['write:pets']);
    const result = await refusal(
      check(withScope({ scopeToken: `DPoP ${writer}`, scopeTokenDpop: proofFor(hopKey, writer) })),
    );
    expect(result.status).toBe(403);
    expect(result.body.code).toBe('ERR10006');
    expect(result.headers['WWW-Authenticate']).toMatch(
      /^DPoP realm="api", error="insufficient_scope", error_description="Scopes \[write:pets\] in scope token and specification scopes \[read:pets\] are not matched", scope="read:pets", algs="ES256 EdDSA PS256 RS256", Bearer realm="api"$/,
    );
  });

  it('neither Bearer nor DPoP: ERR10003', async () => {
    const { check, lines } = guardWith();
    expect((await refusal(check(withScope({ scopeToken: `Basic ${scoped}` })))).body.code).toBe(
      'ERR10003',
    );
    expect(lines[0].record.reason).toBe('X-Scope-Token is not Bearer <token> or DPoP <token>');
  });
});

describe('a cnf this service cannot check: ERR20012 whatever the request proves', () => {
  it.each([
    ['not an object', 'thumbprint', 'cnf is not an object'],
    ['a list', ['x'], 'cnf is not an object'],
    ['null', null, 'cnf is not an object'],
    ['empty', {}, 'cnf names no confirmation method'],
    [
      'a jwk',
      { jwk: { kty: 'EC' } },
      'cnf names a confirmation method other than x5t#S256 and jkt',
    ],
    [
      'x5t#S256 and a kid',
      { 'x5t#S256': CERT_A, kid: 'k' },
      'cnf names a confirmation method other than x5t#S256 and jkt',
    ],
    ['an empty x5t#S256', { 'x5t#S256': '' }, 'cnf x5t#S256 is not a non-empty string'],
    ['a jkt that is a number', { jkt: 7 }, 'cnf jkt is not a non-empty string'],
  ])('cnf %s', async (_, cnf, reason) => {
    const { check, lines } = guardWith();
    const t = token({ cnf });
    expect(
      (
        await refusal(
          check(request({ authorization: `Bearer ${t}`, clientCertThumbprint: CERT_A })),
        )
      ).body,
    ).toEqual(MISMATCH());
    expect(lines[0].record.reason).toBe(reason);
  });

  it('bindingOf: undefined without cnf, the methods with one', () => {
    expect(bindingOf({})).toBeUndefined();
    expect(bindingOf({ cnf: { 'x5t#S256': 'a', jkt: 'b' } })).toEqual({ x5t: 'a', jkt: 'b' });
  });

  it('an authorizer built without a binding check refuses every bound token', async () => {
    const verify = vi.fn(async () => ({
      scopes: [],
      claims: {},
      exp: 0,
      kid: '100',
      key: undefined as never,
      binding: { x5t: CERT_A },
    }));
    const authorize = createAuthorizer(verify, { enableVerifyScope: false });
    const err = await authorize({
      authorization: 'Bearer t',
      scopeToken: undefined,
      requiredScopes: [],
      clientCertThumbprint: CERT_A,
    }).catch((e: StatusError) => e);
    expect((err as StatusError).body).toEqual(MISMATCH());
    expect(((err as StatusError).cause as Error).message).toBe('token binding is not checked here');
  });
});

describe('createTokenBinding, as a library', () => {
  const dpop = { algorithms: ['ES256' as const], iatWindowSeconds: 60, replayCacheMaxEntries: 10 };
  const confirm = createTokenBinding(
    { ...dpop, origins: [] },
    () => T0,
    () => ['http://h'],
  );
  const jkt = jwkThumbprint(KEYS.ec.jwk);
  const proof = (htm: string, htu: string) =>
    dpopProof(KEYS.ec, { htm, htu, accessToken: 't', now: T0 });

  it('without a method or path: htm empty, htu of the root; without own origins: none', async () => {
    const presented = { scheme: 'dpop' as const, token: 't', proof: proof('', 'http://h/') };
    await expect(confirm({ jkt }, presented, {})).resolves.toBeUndefined();
    const none = createTokenBinding({ ...dpop, origins: [] }, () => T0);
    await expect(
      none(
        { jkt },
        { ...presented, proof: proof('GET', 'https://h/x') },
        { method: 'GET', path: '/x' },
      ),
    ).rejects.toThrow('htu is not the request URI');
  });
});
