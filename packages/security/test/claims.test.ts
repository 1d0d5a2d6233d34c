import { callerOf, checkClaims, isExpired } from '../src/claims.js';
import { TokenError } from '../src/token-error.js';

const EXP = 1_700_000_000;
const SKEW = 60;

function outcome(
  claims: Record<string, unknown>,
  now: number,
  checks?: Parameters<typeof checkClaims>[3],
): string {
  try {
    checkClaims(claims, now, SKEW, checks);
    return 'ok';
  } catch (err) {
    expect(err).toBeInstanceOf(TokenError);
    return `${(err as TokenError).code}: ${(err as Error).message}`;
  }
}

describe('isExpired (now - skew >= exp)', () => {
  it('is valid one second before exp + skew', () => {
    expect(isExpired(EXP, EXP + SKEW - 1, SKEW)).toBe(false);
  });
  it('is expired exactly at exp + skew', () => {
    expect(isExpired(EXP, EXP + SKEW, SKEW)).toBe(true);
  });
  it('is expired one second after exp + skew', () => {
    expect(isExpired(EXP, EXP + SKEW + 1, SKEW)).toBe(true);
  });
  it('counts fractions of a second: expired from exp + skew on the millisecond', () => {
    expect(isExpired(EXP, EXP + SKEW - 0.001, SKEW)).toBe(false);
    expect(isExpired(EXP + 0.5, EXP + SKEW + 0.5, SKEW)).toBe(true);
  });
});

describe('checkClaims: the time claims', () => {
  it('returns exp of a token inside its lifetime', () => {
    expect(checkClaims({ exp: EXP }, EXP - 10, SKEW)).toBe(EXP);
  });
  it('treats exp + skew - 1 as valid and exp + skew as expired', () => {
    expect(outcome({ exp: EXP }, EXP + SKEW - 1)).toBe('ok');
    expect(outcome({ exp: EXP }, EXP + SKEW)).toBe('expired: token expired');
    expect(outcome({ exp: EXP }, EXP + SKEW + 1)).toBe('expired: token expired');
  });
  it.each([
    ['missing', {}],
    ['a string', { exp: String(EXP) }],
    ['null', { exp: null }],
    ['NaN-like object', { exp: { value: EXP } }],
  ])('refuses exp %s as invalid', (_name, claims) => {
    expect(outcome(claims, EXP - 100)).toBe('invalid: exp is missing or not a number');
  });
  it('refuses a non-numeric nbf', () => {
    expect(outcome({ exp: EXP, nbf: 'soon' }, EXP - 100)).toBe('invalid: nbf is not a number');
  });
  it('accepts nbf up to now + skew and refuses it one second beyond', () => {
    const now = EXP - 1000;
    expect(outcome({ exp: EXP, nbf: now + SKEW }, now)).toBe('ok');
    expect(outcome({ exp: EXP, nbf: now + SKEW + 1 }, now)).toBe(
      'invalid: token is not valid yet (nbf)',
    );
  });
  it('checks expiry before nbf', () => {
    expect(outcome({ exp: EXP, nbf: EXP + 10_000 }, EXP + SKEW)).toBe('expired: token expired');
  });
  it('leaves iat alone, whatever its type (it is not checked)', () => {
    expect(outcome({ exp: EXP, iat: 'yesterday' }, EXP - 100)).toBe('ok');
  });
});

describe('checkClaims: audience and issuer', () => {
  const checks = { audience: ['urn:chain:api', 'urn:other'], issuer: ['https://issuer'] };
  const now = EXP - 100;

  it('passes without checks, whatever the token holds', () => {
    expect(outcome({ exp: EXP }, now, undefined)).toBe('ok');
    expect(outcome({ exp: EXP }, now, { audience: [], issuer: [] })).toBe('ok');
  });

  it.each([
    [{ iss: 'https://issuer', aud: 'urn:chain:api' }, 'ok'],
    [{ iss: 'https://issuer', aud: ['urn:x', 'urn:other'] }, 'ok'],
    [{ iss: 'https://issuer', aud: 'urn:x' }, 'invalid: aud holds no accepted audience'],
    [{ iss: 'https://issuer', aud: [] }, 'invalid: aud holds no accepted audience'],
    [{ iss: 'https://issuer', aud: [7] }, 'invalid: aud holds no accepted audience'],
    [{ iss: 'https://issuer' }, 'invalid: aud holds no accepted audience'],
    [{ iss: 'https://evil', aud: 'urn:chain:api' }, 'invalid: iss is not an accepted issuer'],
    [{ aud: 'urn:chain:api' }, 'invalid: iss is not an accepted issuer'],
    [{ iss: ['https://issuer'], aud: 'urn:chain:api' }, 'invalid: iss is not an accepted issuer'],
  ])('%j: %s', (claims, expected) => {
    expect(outcome({ exp: EXP, ...claims }, now, checks)).toBe(expected);
  });

  it('checks the time claims first: an expired token of another issuer is expired', () => {
    expect(outcome({ exp: EXP, iss: 'https://evil' }, EXP + SKEW, checks)).toBe(
      'expired: token expired',
    );
  });
});

const tokenScopes = (claims: Record<string, unknown>) => callerOf(claims).scopes;

describe('the scopes of a token', () => {
  it('reads scope as an array', () => {
    expect(tokenScopes({ scope: ['a', 'b', 3] })).toEqual(['a', 'b']);
  });
  it('reads scope as a space-separated string', () => {
    expect(tokenScopes({ scope: ' a  b ' })).toEqual(['a', 'b']);
  });
  it('falls back to scp when scope is absent or of another type', () => {
    expect(tokenScopes({ scp: 'x y' })).toEqual(['x', 'y']);
    expect(tokenScopes({ scope: 42, scp: ['z'] })).toEqual(['z']);
  });
  it('prefers scope over scp', () => {
    expect(tokenScopes({ scope: ['a'], scp: ['z'] })).toEqual(['a']);
  });
  it('is empty without either', () => {
    expect(tokenScopes({})).toEqual([]);
  });
});
