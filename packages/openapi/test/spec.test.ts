import { ConfigError } from '@chain/errors';
import { StatusError } from '@chain/errors';
import { coerceParams, OpenApiSpec } from '../src/index.js';

const doc = {
  openapi: '3.0.3',
  servers: [{ url: 'https://localhost:8443/v2/' }],
  security: [{ global_auth: ['global.r'] }],
  paths: {
    '/pet/{petId}': {
      parameters: [{ name: 'petId', in: 'path', schema: { type: 'integer' } }],
      get: { security: [{ a: ['read:pets'] }, { b: ['admin', 'read:pets'] }] },
      delete: { security: [] },
    },
    '/pet/findByStatus': { get: {} },
    '/flags/{on}/{ratio}/{name}': {
      get: {
        parameters: [
          { name: 'on', in: 'path', schema: { type: 'boolean' } },
          { name: 'ratio', in: 'path', schema: { type: 'number' } },
          { name: 'name', in: 'path', schema: { type: 'string' } },
          { name: 'q', in: 'query', schema: { type: 'integer' } },
        ],
      },
    },
  },
};

describe('OpenApiSpec', () => {
  const spec = new OpenApiSpec(doc);

  it('matches a templated path under the server base path', () => {
    const found = spec.match('GET', '/v2/pet/7');
    expect(found).toEqual({
      kind: 'found',
      params: { petId: '7' },
      operation: {
        path: '/v2/pet/{petId}',
        method: 'get',
        endpoint: '/v2/pet/{petId}@get',
        scopes: ['read:pets', 'admin'],
        params: [{ name: 'petId', type: 'integer' }],
      },
    });
  });

  it('prefers an exact path over a template and uses the global security', () => {
    const found = spec.match('get', '/v2/pet/findByStatus/');
    expect(found.kind === 'found' && found.operation.scopes).toEqual(['global.r']);
  });

  it('honours an operation that clears security', () => {
    const found = spec.match('DELETE', '/v2/pet/1');
    expect(found.kind === 'found' && found.operation.scopes).toEqual([]);
  });

  it('serves HEAD by GET', () => {
    expect(spec.match('HEAD', '/v2/pet/1').kind).toBe('found');
  });

  it('tells a missing path from a missing method', () => {
    expect(spec.match('GET', '/v2/store')).toEqual({ kind: 'no-path' });
    expect(spec.match('GET', '/pet/1')).toEqual({ kind: 'no-path' });
    expect(spec.match('POST', '/v2/pet/1')).toEqual({
      kind: 'no-method',
      allow: 'GET, DELETE, HEAD, OPTIONS',
    });
    expect(spec.match('OPTIONS', '/v2/pet/findByStatus')).toEqual({
      kind: 'no-method',
      allow: 'GET, HEAD, OPTIONS',
    });
  });

  it('answers the Allow of OPTIONS * with every method of the spec', () => {
    expect(spec.allow).toBe('GET, DELETE, HEAD, OPTIONS');
    expect(new OpenApiSpec({ openapi: '3.0.0', paths: { '/x': { post: {} } } }).allow).toBe(
      'POST, OPTIONS',
    );
  });

  it('lists every operation', () => {
    expect(spec.operations().map((o) => o.endpoint)).toEqual([
      '/v2/pet/findByStatus@get',
      '/v2/pet/{petId}@get',
      '/v2/pet/{petId}@delete',
      '/v2/flags/{on}/{ratio}/{name}@get',
    ]);
  });

  it('refuses a document that is not OpenAPI 3', () => {
    expect(() => new OpenApiSpec({ swagger: '2.0', paths: {} }, 'x.yaml')).toThrow(ConfigError);
    expect(() => new OpenApiSpec('text', 'x.yaml')).toThrow(
      'Config error in x.yaml: a map is expected',
    );
    expect(() => new OpenApiSpec({ openapi: '3.0.0', paths: [] }, 'x.yaml')).toThrow(
      'Config error in x.yaml at key "paths": a map is expected',
    );
  });

  it('works without servers', () => {
    const bare = new OpenApiSpec({ openapi: '3.1.0', paths: { '/x': { get: {} } } });
    expect(bare.match('GET', '/x').kind).toBe('found');
  });
});

describe('coerceParams', () => {
  const params = [
    { name: 'on', type: 'boolean' as const },
    { name: 'ratio', type: 'number' as const },
    { name: 'name', type: 'string' as const },
  ];

  it('converts by type and decodes', () => {
    expect(coerceParams(params, { on: 'true', ratio: '-1.5e2', name: 'a%20b' })).toEqual({
      on: true,
      ratio: -150,
      name: 'a b',
    });
  });

  it.each([
    [{ on: 'yes', ratio: '1', name: 'x' }, 'path parameter on must be a boolean'],
    [{ on: 'false', ratio: 'one', name: 'x' }, 'path parameter ratio must be a number'],
    [
      { on: 'false', ratio: '1', name: '%E0%A4%A' },
      'path parameter name is not valid URL encoding',
    ],
  ])('refuses %j with ERR11004', (raw, description) => {
    try {
      coerceParams(params, raw);
      throw new Error('expected a StatusError');
    } catch (err) {
      expect(err).toBeInstanceOf(StatusError);
      expect((err as StatusError).body).toEqual({
        statusCode: 400,
        code: 'ERR11004',
        message: 'VALIDATOR_SCHEMA',
        description: `Schema validation error: ${description}`,
      });
    }
  });
});
