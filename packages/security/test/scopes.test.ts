import { formatScopes, hasAnyScope, tokenScopes } from '../src/scopes';

describe('tokenScopes', () => {
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

describe('hasAnyScope', () => {
  it('passes when nothing is required', () => {
    expect(hasAnyScope([], [])).toBe(true);
  });
  it('passes with any one required scope', () => {
    expect(hasAnyScope(['api_a.w'], ['api_a.r', 'api_a.w'])).toBe(true);
  });
  it('fails without any', () => {
    expect(hasAnyScope(['api_b.r'], ['api_a.r', 'api_a.w'])).toBe(false);
    expect(hasAnyScope([], ['read:pets'])).toBe(false);
  });
});

describe('formatScopes', () => {
  it("prints like Java's List.toString", () => {
    expect(formatScopes(['a', 'b'])).toBe('[a, b]');
    expect(formatScopes([])).toBe('[]');
  });
});
