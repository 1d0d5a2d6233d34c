import { createSigningKey, hostileTokens, mintToken, b64url } from '@chain/testkit';
import { decodeJwt, MAX_TOKEN_LENGTH } from '../src/jwt-decode';
import { TokenError } from '../src/token-error';

const key = createSigningKey('100');

function reason(token: string): string {
  try {
    decodeJwt(token);
    return 'decoded';
  } catch (err) {
    expect(err).toBeInstanceOf(TokenError);
    expect((err as TokenError).kind).toBe('invalid');
    return (err as Error).message;
  }
}

describe('decodeJwt', () => {
  it('decodes a well-formed RS256 token', () => {
    const token = mintToken(key, { now: 1_700_000_000_000, scope: ['read:pets'] });
    const decoded = decodeJwt(token);
    expect(decoded.header).toEqual({ alg: 'RS256', typ: 'JWT', kid: '100' });
    expect(decoded.claims.scope).toEqual(['read:pets']);
    expect(decoded.signingInput).toBe(token.split('.').slice(0, 2).join('.'));
    expect(decoded.signature.length).toBe(256);
  });

  it.each([
    ['x'.repeat(MAX_TOKEN_LENGTH + 1), `token longer than ${MAX_TOKEN_LENGTH} characters`],
    ['a.b', 'token is not three dot-separated segments'],
    ['a.b.c.d', 'token is not three dot-separated segments'],
    ['a=.b.c', 'a token segment is not base64url'],
    ['.b.c', 'a token segment is not base64url'],
    [`${b64url('{"alg":')}.${b64url('{}')}.c`, 'header is not JSON'],
    [`${b64url('[1]')}.${b64url('{}')}.c`, 'header is not a JSON object'],
    [`${b64url({ alg: 'RS256', kid: '1' })}.${b64url('{}')}.`, 'signature is empty'],
    [`${b64url({ alg: 'RS256', kid: '1' })}.${b64url('"s"')}.c`, 'payload is not a JSON object'],
    [`${b64url({ alg: 'RS256', kid: '1' })}.${b64url('{x')}.c`, 'payload is not JSON'],
    [
      `${b64url({ alg: 'RS256', kid: 7 })}.${b64url('{}')}.c`,
      'kid is missing or is not a plain key id',
    ],
    [
      `${b64url({ alg: 'RS256', kid: '' })}.${b64url('{}')}.c`,
      'kid is missing or is not a plain key id',
    ],
    [
      `${b64url({ alg: 'RS256', kid: '...' })}.${b64url('{}')}.c`,
      'kid is missing or is not a plain key id',
    ],
    [
      `${b64url({ alg: 'RS256', kid: 'k'.repeat(129) })}.${b64url('{}')}.c`,
      'kid is missing or is not a plain key id',
    ],
    [`${b64url({ alg: 'RS384', kid: '1' })}.${b64url('{}')}.c`, 'alg is not RS256'],
  ])('refuses %s', (token, expected) => {
    expect(reason(token)).toBe(expected);
  });

  it('refuses every hostile token of the testkit that is malformed before its claims', () => {
    const reasons = Object.fromEntries(hostileTokens(key).map((t) => [t.name, reason(t.token)]));
    expect(reasons).toMatchObject({
      'alg none, no signature': 'alg is not RS256',
      'alg none with kid': 'alg is not RS256',
      'HS256 with the certificate as secret': 'alg is not RS256',
      'HS256 with the public key as secret': 'alg is not RS256',
      'path-like kid': 'kid is missing or is not a plain key id',
      'dot-dot kid': 'kid is missing or is not a plain key id',
      'url-like kid': 'kid is missing or is not a plain key id',
      'no kid': 'kid is missing or is not a plain key id',
      '100 KB token': `token longer than ${MAX_TOKEN_LENGTH} characters`,
      'header segment not base64url': 'a token segment is not base64url',
      'payload segment not base64url': 'a token segment is not base64url',
      'signature segment not base64url': 'a token segment is not base64url',
      'two segments': 'token is not three dot-separated segments',
      'four segments': 'token is not three dot-separated segments',
      'payload not JSON': 'payload is not JSON',
      'payload a JSON array': 'payload is not a JSON object',
      'payload a JSON string': 'payload is not a JSON object',
      'payload null': 'payload is not a JSON object',
      'header not JSON': 'header is not JSON',
      'crit header': 'crit header parameters are not supported',
      // these decode; their claims or signature are refused later
      'exp missing': 'decoded',
      'signature of another token': 'decoded',
    });
  });

  it('never puts token text in its reasons', () => {
    const secretish = b64url('{"alg":"RS256","kid":"1"}') + '.' + b64url('SECRET-PAYLOAD') + '.c';
    expect(reason(secretish)).toBe('payload is not JSON');
  });
});
