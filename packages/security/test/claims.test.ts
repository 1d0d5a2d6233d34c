import { checkTimes, isExpired, stringClaim } from '../src/claims';
import { TokenError } from '../src/token-error';

const EXP = 1_700_000_000;
const SKEW = 60;

function outcome(claims: Record<string, unknown>, now: number): string {
  try {
    checkTimes(claims, now, SKEW);
    return 'ok';
  } catch (err) {
    return `${(err as TokenError).kind}: ${(err as Error).message}`;
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
});

describe('checkTimes', () => {
  it('returns exp of a token inside its lifetime', () => {
    expect(checkTimes({ exp: EXP }, EXP - 10, SKEW)).toBe(EXP);
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
});

describe('stringClaim', () => {
  it('reads strings only', () => {
    expect(stringClaim({ client_id: 'c', user_id: 7 }, 'client_id')).toBe('c');
    expect(stringClaim({ client_id: 'c', user_id: 7 }, 'user_id')).toBeUndefined();
  });
});
