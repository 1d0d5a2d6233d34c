import { errorBody, isStatusCode, STATUS } from '../src/status.js';
import { StatusError, toStatusError, wwwAuthenticate } from '../src/status-error.js';

describe('the catalogue', () => {
  it('renders every row with its status, message and a description without placeholders', () => {
    for (const code of Object.keys(STATUS) as (keyof typeof STATUS)[]) {
      const body = errorBody(code);
      expect(body.code).toBe(code);
      expect(body.statusCode).toBe(STATUS[code].statusCode);
      expect(body.message).toBe(STATUS[code].message);
      expect(typeof body.description).toBe('string');
      expect(body.description).not.toMatch(/undefined/);
    }
  });

  it.each([
    ['ERR10007', ['/x'], 'Request path /x cannot be found in the spec.'],
    ['ERR10008', ['POST', '/x'], 'Request method POST cannot be found in the path /x.'],
    ['ERR11004', ['bad id'], 'Schema validation error: bad id'],
    ['ERR20001', ['Pet 9'], 'Pet 9 cannot be found.'],
    ['ERR20002', ['api-b'], 'Downstream service api-b could not be reached'],
    ['ERR20003', ['api-b', '3000'], 'Downstream service api-b did not answer within 3000 ms'],
    ['ERR20004', ['api-b', 'HTTP 500'], 'Downstream service api-b answered HTTP 500'],
    ['ERR20007', ['No Host header'], 'No Host header'],
    ['ERR20017', ['/metrics'], 'Request path /metrics is served by this service but not enabled'],
    [
      'ERR20018',
      ['security.yml: not valid YAML'],
      'The configuration in use stays, a file is refused: security.yml: not valid YAML',
    ],
    ['ERR20008', ['131072'], 'The request headers are larger than the limit of 131072 bytes'],
    [
      'ERR20012',
      ['X-Scope-Token'],
      'Token in X-Scope-Token header is bound to a client certificate or DPoP key that the request does not prove',
    ],
    [
      'ERR20013',
      ['X-Scope-Token'],
      'DPoP proof of the token in X-Scope-Token header is missing or invalid',
    ],
    [
      'ERR20014',
      ['X-Scope-Token'],
      'DPoP proof of the token in X-Scope-Token header was already used',
    ],
    [
      'ERR20005',
      ['101'],
      'The verification key for kid 101 could not be fetched from the key distribution server',
    ],
  ] as const)('%s fills in its arguments', (code, args, description) => {
    expect(errorBody(code, ...args).description).toBe(description);
  });

  it('knows its codes', () => {
    expect(isStatusCode('ERR10000')).toBe(true);
    expect(isStatusCode('toString')).toBe(false);
    expect(isStatusCode(10000)).toBe(false);
  });
});

describe('StatusError', () => {
  it('carries body, status, challenge and cause', () => {
    const cause = new Error('upstream');
    const err = new StatusError('ERR10001', [], { cause, headers: { 'X-Extra': '1' } });
    expect(err.statusCode).toBe(401);
    expect(err.cause).toBe(cause);
    expect(err.message).toBe(
      'ERR10001 AUTH_TOKEN_EXPIRED: Jwt token in authorization header expired',
    );
    expect(err.headers).toEqual({
      'WWW-Authenticate':
        'Bearer realm="api", error="invalid_token", error_description="Jwt token in authorization header expired"',
      'X-Extra': '1',
    });
  });

  it('sends no challenge for statuses other than 401 and 403', () => {
    expect(new StatusError('ERR20005', ['1']).headers).toEqual({});
  });

  it('challenges a 403 without scopes without a scope attribute, and strips quotes', () => {
    expect(wwwAuthenticate({ ...errorBody('ERR10005'), description: 'a "b" \\c' })).toBe(
      'Bearer realm="api", error="insufficient_scope", error_description="a b c"',
    );
  });

  it('turns anything else into ERR10010 without detail', () => {
    const err = toStatusError(new Error('secret detail'));
    expect(err.body).toEqual({
      statusCode: 500,
      code: 'ERR10010',
      message: 'RUNTIME_EXCEPTION',
      description: 'Unexpected runtime exception',
    });
    const same = new StatusError('ERR10000');
    expect(toStatusError(same)).toBe(same);
  });
});
