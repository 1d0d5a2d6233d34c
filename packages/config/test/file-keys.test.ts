import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@chain/errors';
import { ConfigLoader, configFile, listOf, mapOf, text, z } from '../src/index.js';
import { closestKey } from '../src/key-suggest.js';
import { keyAsWritten, prepareKeys } from '../src/file-keys.js';

function folder(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-keys-test-'));
  for (const [name, content] of Object.entries(files))
    fs.writeFileSync(path.join(dir, name), content);
  return dir;
}

const security = configFile(
  () =>
    z.strictObject({
      enableVerifyJwt: z.boolean().default(false),
      jwt: z
        .strictObject({
          clockSkewInSeconds: z.number().default(60),
          certificate: mapOf(z.string()).default({}),
        })
        .prefault({}),
      oauth: z
        .strictObject({
          key: z
            .strictObject({ uri: z.string().optional(), audience: z.string().optional() })
            .prefault({}),
        })
        .prefault({}),
      influxdbHost: z.string().default('localhost'),
    }),
  {
    light4j: {
      enableVerifySwt: {},
      ignoreJwtExpiry: { same: false },
      'oauth.sign': { note: 'no signing service here' },
      'oauth.key.enableHttp2': {},
      'oauth.token.key.enableHttp2': {},
    },
    aliases: { serverHost: 'influxdbHost', 'oauth.token.key': 'oauth.key' },
  },
);

function load(content: string) {
  const dir = folder({ 'security.yml': content });
  const loader = new ConfigLoader({ bundledDir: dir, env: {} });
  return {
    file: path.join(dir, 'security.yml'),
    loader,
    load: () => loader.load('security', security),
  };
}

function loadError(content: string): ConfigError {
  const { load: run } = load(content);
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('light-4j keys and aliases (configFile)', () => {
  it('loads a light-4j key the schema does not implement with one warning naming file and key', () => {
    const {
      file,
      loader,
      load: run,
    } = load(
      'enableVerifyJwt: true\nenableVerifySwt: true\noauth:\n  sign:\n    uri: /x\n    timeout: 2\n',
    );
    expect(run()).toMatchObject({ enableVerifyJwt: true });
    expect(loader.warnings).toEqual([
      { file, key: 'enableVerifySwt', message: 'light-4j key not supported here; ignored' },
      {
        file,
        key: 'oauth.sign',
        message: 'light-4j key not supported here; ignored (no signing service here)',
      },
    ]);
  });

  it('loads without a warning a light-4j key whose value is what is done here anyway', () => {
    const { loader, load: run } = load('ignoreJwtExpiry: false\n');
    run();
    expect(loader.warnings).toEqual([]);
    const other = load('ignoreJwtExpiry: true\n');
    other.load();
    expect(other.loader.warnings.map((w) => w.key)).toEqual(['ignoreJwtExpiry']);
  });

  it('reads an alias as the key it names, subtrees included', () => {
    const { load: run } = load(
      'serverHost: influx.example\noauth:\n  token:\n    key:\n      uri: /oauth2/key\n      enableHttp2: true\n',
    );
    expect(run()).toMatchObject({
      influxdbHost: 'influx.example',
      oauth: { key: { uri: '/oauth2/key' } },
    });
  });

  it('accepts both names with the same value and refuses different values, naming both', () => {
    expect(load('serverHost: a\ninfluxdbHost: a\n').load()).toMatchObject({ influxdbHost: 'a' });
    const err = loadError('serverHost: a\ninfluxdbHost: b\n');
    expect(err.key).toBe('serverHost');
    expect(err.reason).toBe('is set twice with different values, also as "influxdbHost"; keep one');
    const nested = loadError(
      'oauth:\n  key:\n    uri: /a\n  token:\n    key:\n      uri: /b\n      audience: x\n',
    );
    expect(nested.key).toBe('oauth.token.key.uri');
    expect(nested.reason).toBe(
      'is set twice with different values, also as "oauth.key.uri"; keep one',
    );
  });

  it.each([
    ['enableVerifyJWT: true\n', 'enableVerifyJWT', 'enableVerifyJwt'],
    ['enableVerfyJwt: true\n', 'enableVerfyJwt', 'enableVerifyJwt'],
    ['jwt:\n  clockSkewInSecond: 5\n', 'jwt.clockSkewInSecond', 'clockSkewInSeconds'],
    ['enableVerifySWT: true\n', 'enableVerifySWT', 'enableVerifySwt'],
    ['oauth:\n  token:\n    key:\n      audiense: x\n', 'oauth.token.key.audiense', 'audience'],
    ['serverHots: x\n', 'serverHots', 'serverHost'],
  ])('stops on a misspelled key naming the closest known one: %j', (content, key, closest) => {
    const err = loadError(content);
    expect(err.key).toBe(key);
    expect(err.reason).toBe(`unknown key; did you mean "${closest}"?`);
  });

  it('says only "unknown key" when nothing known is close', () => {
    const err = loadError('somethingElseEntirely: 1\n');
    expect(err.reason).toBe('unknown key');
    expect(err.message).toBe(
      `Config error in ${err.file} at key "somethingElseEntirely": unknown key`,
    );
  });

  it('names a wrong type under an alias by the name the file used', () => {
    const err = loadError('oauth:\n  token:\n    key:\n      uri: 5\n');
    expect(err.key).toBe('oauth.token.key.uri');
  });

  it('leaves a value that is not a map alone', () => {
    expect(prepareKeys('f', 'text', { light4j: { a: {} } })).toEqual({
      value: 'text',
      warnings: [],
      moved: [],
    });
    expect(prepareKeys('f', { a: 1 }, undefined).value).toEqual({ a: 1 });
    // an alias whose target's parent is not a map is left for the schema to refuse
    expect(prepareKeys('f', { x: 1, oauth: 'no' }, { aliases: { x: 'oauth.y' } }).moved).toEqual(
      [],
    );
    expect(keyAsWritten('a.b', [['oauth.key', 'oauth.token.key']])).toBe('a.b');
  });

  it('takes a `*` part as each key of the map there, keeping its emptied entries', () => {
    const raw = { s: { 'a.b': { x: 1, y: 2 }, c: { x: 3 }, d: 'text' } };
    const note = 'light-4j key not supported here; ignored (n)';
    expect(prepareKeys('f', raw, { light4j: { 's.*.x': { note: 'n' } } })).toEqual({
      value: { s: { 'a.b': { y: 2 }, c: {}, d: 'text' } },
      warnings: [
        { file: 'f', key: 's.a.b.x', message: note },
        { file: 'f', key: 's.c.x', message: note },
      ],
      moved: [],
    });
    expect(prepareKeys('f', { s: 'text' }, { light4j: { 's.*.x': {} } }).value).toEqual({
      s: 'text',
    });
  });
});

describe('closestKey', () => {
  it('takes the fewest edits, case-insensitively', () => {
    expect(closestKey('ENABLEVERIFYJWT', ['enableVerifyJwx', 'enableVerifyJwt'])).toBe(
      'enableVerifyJwt',
    );
    expect(closestKey('sittin', ['kitten', 'sitting'])).toBe('sitting');
    expect(closestKey('ab', ['', 'abc'])).toBe('abc');
  });

  it('suggests only a slip, not any key', () => {
    expect(closestKey('uir', ['uri', 'url'])).toBe('uri');
    expect(closestKey('zzzzzz', ['uri', 'audience'])).toBeUndefined();
    expect(closestKey('x', [])).toBeUndefined();
  });
});

describe('light-4j text forms', () => {
  const list = listOf(z.string());
  const map = mapOf(z.string());

  it.each([
    [
      ['/a', '/b'],
      ['/a', '/b'],
    ],
    ['/a, /b,/c', ['/a', '/b', '/c']],
    ['["/a","/b"]', ['/a', '/b']],
    ['', []],
    ['  ', []],
  ])('reads the list %j', (input, expected) => {
    expect(list.parse(input)).toEqual(expected);
  });

  it.each([
    [{ a: 'b' }, { a: 'b' }],
    ['100=primary.crt&101=secondary.crt', { '100': 'primary.crt', '101': 'secondary.crt' }],
    ['client_id = X-Client-Id & scope=X-Scope', { client_id: 'X-Client-Id', scope: 'X-Scope' }],
    ['{"client_id":"X-Client-Id"}', { client_id: 'X-Client-Id' }],
    ['', {}],
  ])('reads the map %j', (input, expected) => {
    expect(map.parse(input)).toEqual(expected);
  });

  it('refuses text that is neither form', () => {
    expect(map.safeParse('no pairs here').success).toBe(false);
    expect(map.safeParse('{not json').success).toBe(false);
    expect(list.safeParse('[not json').success).toBe(false);
  });

  it('reads a number or a boolean written unquoted as the text written', () => {
    expect(text().parse(123456)).toBe('123456');
    expect(text().parse(true)).toBe('true');
    expect(text().parse('abc')).toBe('abc');
    expect(text().safeParse(null).success).toBe(false);
  });
});
