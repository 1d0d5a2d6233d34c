import { ConfigError } from '@chain/errors';
import { z } from '../src/index.js';
import { environmentName, interpolate } from '../src/interpolate.js';
import { schemaKeysAt } from '../src/key-suggest.js';

const expand = (
  value: unknown,
  env: NodeJS.ProcessEnv = {},
  values: Record<string, unknown> = {},
) => interpolate(value, { env, values }, 'x.yml');

describe('interpolate', () => {
  it('names environment variables as light-4j converts them', () => {
    expect(environmentName('openapi-security.enableVerifyJwt')).toBe(
      'OPENAPI_SECURITY_ENABLEVERIFYJWT',
    );
  });

  it('puts values inside longer text as text, lists and maps as JSON', () => {
    expect(
      expand(
        'a=${list}, b=${map}, c=${n}, d=${gone:}',
        {},
        { list: [1, 2], map: { k: 'v' }, n: 5 },
      ),
    ).toBe('a=[1,2], b={"k":"v"}, c=5, d=');
  });

  it('keeps an environment variable set to the empty text', () => {
    expect(expand('${A:default}', { A: '' })).toBe('');
  });

  it('leaves out list items and keys that expand to nothing, and a values.yml null', () => {
    expect(expand({ list: ['${a:}', 'b'], key: '${b:}', nulled: '${c}' }, {}, { c: null })).toEqual(
      {
        list: ['b'],
      },
    );
  });

  it('refuses an empty expression and names the key', () => {
    expect(() => expand({ k: { j: '${}' } })).toThrow(
      new ConfigError('x.yml', 'k.j', 'an empty ${} expression'),
    );
  });

  it('uses ${name:?} with a default message', () => {
    expect(() => expand({ k: '${need:?}' })).toThrow(
      new ConfigError('x.yml', 'k', 'need is required'),
    );
  });

  it('keeps text that is not valid YAML as it is', () => {
    expect(expand('${A}', { A: '[unclosed' })).toBe('[unclosed');
    expect(expand('${A}', { A: 'true' })).toBe(true);
  });
});

describe('schemaKeysAt', () => {
  const schema = z
    .strictObject({
      a: z.preprocess((v) => v, z.strictObject({ b: z.string(), c: z.number() })).optional(),
      list: z.array(z.string()),
      piped: z
        .string()
        .transform((s) => s.length)
        .pipe(z.number()),
    })
    .prefault({ list: [], piped: '' });

  it('finds the keys of objects under defaults, optionals and preprocess pipes', () => {
    expect(schemaKeysAt(schema, [])).toEqual(['a', 'list', 'piped']);
    expect(schemaKeysAt(schema, ['a'])).toEqual(['b', 'c']);
    expect(schemaKeysAt(schema, ['list'])).toEqual([]);
    expect(schemaKeysAt(schema, ['piped'])).toEqual([]);
    expect(schemaKeysAt(schema, ['missing', 'deeper'])).toEqual([]);
  });
});
