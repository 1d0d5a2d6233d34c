import { checkClaims } from '../src/claim-checks';
import { TokenError } from '../src/token-error';

const reason = (fn: () => void) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof TokenError ? `${err.kind}: ${err.message}` : String(err);
  }
};

describe('checkClaims', () => {
  const checks = { audience: ['urn:chain:api', 'urn:other'], issuer: ['https://issuer'] };

  it('passes without checks, whatever the token holds', () => {
    expect(reason(() => checkClaims({}, undefined))).toBe('ok');
    expect(reason(() => checkClaims({}, { audience: [], issuer: [] }))).toBe('ok');
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
    expect(reason(() => checkClaims(claims, checks))).toBe(expected);
  });
});
