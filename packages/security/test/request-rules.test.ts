import { applyPassThrough, passThroughHeaders, pathPrefixMatcher } from '../src/request-rules.js';

describe('pathPrefixMatcher', () => {
  it.each([
    ['/health', ['/health'], true],
    ['/health/ready', ['/health'], true],
    ['/healthz', ['/health'], false],
    ['/v1/data', ['/v1/'], true],
    ['/v1', ['/v1/'], true],
    ['/v2/pet', ['/v1', '/v2'], true],
    ['/v3', ['/v1', '/v2'], false],
    ['/anything', [], false],
  ])('%s with %j: %s', (path, prefixes, skipped) => {
    const matcher = pathPrefixMatcher(prefixes.map((prefix) => [prefix, true]));
    expect(matcher(path) ?? false).toBe(skipped);
  });

  it('gives the value of the longest prefix; / matches every path', () => {
    const serviceOf = pathPrefixMatcher([
      ['/', 'any'],
      ['/v2', 'v2'],
      ['/v2/pet/', 'pet'],
    ]);
    expect(['/v2/pet/1', '/v2/pets', '/v2', '/v1/data', ''].map(serviceOf)).toEqual([
      'pet',
      'v2',
      'v2',
      'any',
      'any',
    ]);
  });
});

describe('passThroughHeaders', () => {
  it('maps claims to lower-case header names, lists joined by spaces, objects as JSON', () => {
    expect(
      passThroughHeaders(
        {
          client_id: 'c1',
          exp: 1700000000,
          admin: false,
          scope: ['a', 'b'],
          roles: [{ r: 1 }, 'x'],
          address: { city: 'Z' },
          none: null,
        },
        {
          client_id: 'X-Client-Id',
          exp: 'X-Exp',
          admin: 'X-Admin',
          scope: 'X-Scope',
          roles: 'X-Roles',
          address: 'X-Address',
          none: 'X-None',
          absent: 'X-Absent',
        },
      ),
    ).toEqual({
      'x-client-id': 'c1',
      'x-exp': '1700000000',
      'x-admin': 'false',
      'x-scope': 'a b',
      'x-roles': '{"r":1} x',
      'x-address': '{"city":"Z"}',
    });
  });

  it('leaves out a value that would inject a header line', () => {
    expect(
      passThroughHeaders({ user_id: 'u1\r\nX-Admin: true' }, { user_id: 'X-User-Id' }),
    ).toEqual({});
  });

  it('does not read claims from the prototype', () => {
    expect(passThroughHeaders({}, { toString: 'X-To-String' })).toEqual({});
  });
});

describe('applyPassThrough', () => {
  it("removes the caller's own headers of those names, then sets the verified values", () => {
    const headers: Record<string, string | string[] | undefined> = {
      'x-user-id': 'admin',
      'x-other': 'kept',
    };
    applyPassThrough(
      headers,
      { user_id: 'X-User-Id', client_id: 'X-Client-Id' },
      {
        'x-client-id': 'c1',
      },
    );
    expect(headers).toEqual({ 'x-other': 'kept', 'x-client-id': 'c1' });
  });
});
