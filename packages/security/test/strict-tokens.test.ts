import path from 'node:path';
import { CERTS, devSigningKey, signToken, standardClaims, type Claims } from '@chain/testkit';
import { createVerifier } from '../src/verifier.js';
import { manualClock } from './helpers.js';

// RFC 9068 access tokens (`jwt.strict`) and a maximum age from `iat` (`jwt.maxTokenAgeSeconds`).
const primary = devSigningKey('100');
const T0 = 1_700_000_000_000;
const IAT = T0 / 1000;
const MAX_AGE = 300;
const SKEW = 10;

const rfc9068 = (claims: Claims = {}, typ = 'at+jwt') =>
  signToken(primary, { ...standardClaims({ now: T0 }), sub: 'u1', ...claims }, { typ });

function verifierAt(jwt: Record<string, unknown>, cache: boolean) {
  const clock = manualClock(T0);
  const verifier = createVerifier({
    config: {
      enableVerifyJwt: true,
      enableVerifyScope: false,
      enableJwtCache: cache,
      jwt: {
        certificate: { '100': path.join(CERTS, 'primary.crt') },
        clockSkewInSeconds: SKEW,
        ...jwt,
      },
    },
    now: clock.now,
  });
  const send = async (token: string) => {
    const verdict = await verifier.verify({
      method: 'GET',
      path: '/v1/data',
      headers: { authorization: `Bearer ${token}` },
      requiredScopes: [],
    });
    if (verdict.ok) return 'ok';
    const { status, headers, body } = verdict.refusal;
    return { status, challenge: headers['WWW-Authenticate'], body: JSON.parse(body) as unknown };
  };
  return { clock, send };
}

const refused = (code: 'ERR10000' | 'ERR10001') => {
  const [message, description] =
    code === 'ERR10000'
      ? ['INVALID_AUTH_TOKEN', 'Incorrect signature or malformed token in authorization header']
      : ['AUTH_TOKEN_EXPIRED', 'Jwt token in authorization header expired'];
  return {
    status: 401,
    challenge: `Bearer realm="api", error="invalid_token", error_description="${description}"`,
    body: { statusCode: 401, code, message, description },
  };
};

describe.each([
  ['cached', true],
  ['uncached', false],
])('jwt.strict and jwt.maxTokenAgeSeconds, %s', (_name, cache) => {
  it('strict: typ at+jwt or application/at+jwt in any case is accepted; JWT, none or another is ERR10000', async () => {
    const { send } = verifierAt({ strict: true }, cache);
    for (const typ of ['at+jwt', 'application/at+jwt', 'AT+JWT', 'Application/At+Jwt']) {
      expect(await send(rfc9068({}, typ))).toBe('ok');
    }
    for (const typ of ['JWT', 'jwt', 'dpop+jwt', 'application/jwt', 'at+jwt ', 'xat+jwt']) {
      expect(await send(rfc9068({}, typ))).toEqual(refused('ERR10000'));
    }
    const noTyp = signToken(
      primary,
      { ...standardClaims({ now: T0 }), sub: 'u1' },
      { typ: undefined },
    );
    expect(await send(noTyp)).toEqual(refused('ERR10000'));
  });

  it.each(['iss', 'sub', 'aud', 'client_id', 'jti', 'iat'])(
    'strict: a token without %s is ERR10000',
    async (claim) => {
      const { send } = verifierAt({ strict: true }, cache);
      expect(await send(rfc9068({ [claim]: undefined }))).toEqual(refused('ERR10000'));
    },
  );

  it('not strict (the default): a typ JWT token without sub is accepted', async () => {
    const { send } = verifierAt({}, cache);
    expect(await send(signToken(primary, standardClaims({ now: T0 })))).toBe('ok');
  });

  it('max age: accepted until iat + max + skew, ERR10001 from then on, even from the cache', async () => {
    const { clock, send } = verifierAt({ maxTokenAgeSeconds: MAX_AGE }, cache);
    // exp is 600 s after iat: the age ends the token first.
    const token = rfc9068();
    expect(await send(token)).toBe('ok');
    clock.set((IAT + MAX_AGE + SKEW) * 1000 - 1);
    expect(await send(token)).toBe('ok');
    clock.set((IAT + MAX_AGE + SKEW) * 1000);
    expect(await send(token)).toEqual(refused('ERR10001'));
    // Fresh at the same moment: a token issued later.
    expect(await send(rfc9068({ iat: IAT + 1 }))).toBe('ok');
  });

  it('max age: an exp sooner than iat + max still ends the token', async () => {
    const { clock, send } = verifierAt({ maxTokenAgeSeconds: MAX_AGE }, cache);
    const token = rfc9068({ exp: IAT + 100 });
    expect(await send(token)).toBe('ok');
    clock.set((IAT + 100 + SKEW) * 1000);
    expect(await send(token)).toEqual(refused('ERR10001'));
  });

  it('max age: no iat, an iat not a number or beyond the skew in the future is ERR10000', async () => {
    const { send } = verifierAt({ maxTokenAgeSeconds: MAX_AGE }, cache);
    expect(await send(rfc9068({ iat: undefined }))).toEqual(refused('ERR10000'));
    expect(await send(rfc9068({ iat: String(IAT) }))).toEqual(refused('ERR10000'));
    expect(await send(rfc9068({ iat: IAT + SKEW }))).toBe('ok');
    expect(await send(rfc9068({ iat: IAT + SKEW + 1 }))).toEqual(refused('ERR10000'));
  });
});

describe('jwt.strict and jwt.maxTokenAgeSeconds in security.yml', () => {
  const config = (jwt: Record<string, unknown>) => () =>
    createVerifier({ config: { enableVerifyJwt: true, jwt: { certificate: {}, ...jwt } } });

  it.each([
    [{ strict: 'yes' }, 'at key "jwt.strict": expected boolean, received string'],
    [
      { maxTokenAgeSeconds: 0 },
      'at key "jwt.maxTokenAgeSeconds": Too small: expected number to be >=1',
    ],
    [{ maxTokenAgeSeconds: '5m' }, 'at key "jwt.maxTokenAgeSeconds": expected number'],
    [
      { maxTokenAge: 60 },
      'at key "jwt.maxTokenAge": unknown key; did you mean "maxTokenAgeSeconds"?',
    ],
  ])('refuses %j at start, naming the file and key', (jwt, message) => {
    expect(config(jwt)).toThrow(`Config error in security.yml ${message}`);
  });
});
