import { checkIntrospectedBinding } from '../src/introspected-binding';
import { TokenError } from '../src/token-error';

const THUMBPRINT = 'A4DtL2JmUMhAsvJj5tKyn64SqzmuXbMrJa0n761y5v0';

const refusal = (cnf: unknown, thumbprint?: string) => {
  try {
    checkIntrospectedBinding(cnf, thumbprint);
  } catch (err) {
    expect(err).toBeInstanceOf(TokenError);
    return `${(err as TokenError).kind}: ${(err as Error).message}`;
  }
  return 'accepted';
};

describe('checkIntrospectedBinding (RFC 8705 cnf of an introspection answer)', () => {
  it('binds nothing without cnf, or with an empty one', () => {
    expect(refusal(undefined)).toBe('accepted');
    expect(refusal({}, undefined)).toBe('accepted');
  });

  it('x5t#S256: only on a connection whose client certificate has that thumbprint', () => {
    expect(refusal({ 'x5t#S256': THUMBPRINT }, THUMBPRINT)).toBe('accepted');
    expect(refusal({ 'x5t#S256': THUMBPRINT }, undefined)).toBe(
      'invalid: certificate-bound token without a client certificate',
    );
    expect(refusal({ 'x5t#S256': THUMBPRINT }, `${THUMBPRINT.slice(1)}B`)).toBe(
      'invalid: certificate-bound token from another client certificate',
    );
    expect(refusal({ 'x5t#S256': 42 }, THUMBPRINT)).toBe(
      'invalid: certificate-bound token from another client certificate',
    );
  });

  it('a DPoP-bound token (jkt) sent as Bearer, or a method not checked here, is refused', () => {
    expect(refusal({ jkt: 'abc' }, THUMBPRINT)).toBe('invalid: DPoP-bound token sent as Bearer');
    expect(refusal({ 'x5t#S256': THUMBPRINT, jwk: {} }, THUMBPRINT)).toBe(
      'invalid: token bound by a confirmation method not checked here',
    );
  });

  it.each([null, 'x5t', ['x5t#S256'], 7])('a cnf that is not an object (%p) is refused', (cnf) => {
    expect(refusal(cnf, THUMBPRINT)).toBe(
      'invalid: introspection answered a cnf that is not an object',
    );
  });
});
