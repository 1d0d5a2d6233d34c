import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@chain/errors';
import { ConfigLoader, z } from '../src/index.js';

function folder(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-test-'));
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

const schema = ({ file }: { file: () => z.ZodType<string, string> }) =>
  z.strictObject({
    port: z.number().int().default(7441),
    name: z.string().default('svc'),
    cert: file().optional(),
  });

function loadError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('ConfigLoader', () => {
  it('reads the bundled file when no override folder exists', () => {
    const bundled = folder({ 'server.yml': 'port: 1\nname: bundled\n' });
    const loader = new ConfigLoader({ bundledDir: bundled, env: {} });
    expect(loader.overrideDir).toBeUndefined();
    expect(loader.load('server', schema)).toEqual({ port: 1, name: 'bundled' });
  });

  it('lets CONFIG_DIR replace a file whole, file by file', () => {
    const bundled = folder({ 'server.yml': 'port: 1\nname: bundled\n', 'other.yml': 'port: 5\n' });
    const override = folder({ 'server.yml': 'port: 2\n' });
    const loader = new ConfigLoader({ bundledDir: bundled, env: { CONFIG_DIR: override } });
    // whole file replaced: `name` falls back to the schema default, not to the bundled value
    expect(loader.load('server', schema)).toEqual({ port: 2, name: 'svc' });
    expect(loader.load('other', schema)).toEqual({ port: 5, name: 'svc' });
  });

  it('accepts .yaml as well as .yml', () => {
    const bundled = folder({ 'openapi.yaml': 'openapi: 3.0.0\n' });
    const loader = new ConfigLoader({ bundledDir: bundled, env: {} });
    expect(loader.raw('openapi').value).toEqual({ openapi: '3.0.0' });
  });

  it('skips a CONFIG_DIR that does not exist and reports it', () => {
    const bundled = folder({ 'server.yml': 'port: 1\n' });
    const loader = new ConfigLoader({ bundledDir: bundled, env: { CONFIG_DIR: '/no/such/dir' } });
    expect(loader.overrideDir).toBeUndefined();
    expect(loader.missingOverride).toBe('/no/such/dir');
    expect(loader.load('server', schema).port).toBe(1);
  });

  it('applies defaults for a missing optional file and refuses a missing required one', () => {
    const loader = new ConfigLoader({ bundledDir: folder({}), env: {} });
    expect(loader.load('server', schema)).toEqual({ port: 7441, name: 'svc' });
    const err = loadError(() => loader.load('server', schema, { required: true }));
    expect(err.message).toMatch(/server\.yml: file not found/);
  });

  it('resolves relative paths against the folder the file came from', () => {
    const bundled = folder({ 'server.yml': 'cert: a.crt\n', 'a.crt': 'x' });
    const override = folder({ 'server.yml': 'cert: certs/b.crt\n', 'certs/b.crt': 'y' });
    expect(new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema).cert).toBe(
      path.join(bundled, 'a.crt'),
    );
    expect(
      new ConfigLoader({ bundledDir: bundled, env: { CONFIG_DIR: override } }).load(
        'server',
        schema,
      ).cert,
    ).toBe(path.join(override, 'certs/b.crt'));
  });

  it('names file and key for a value of the wrong type', () => {
    const bundled = folder({ 'server.yml': 'port: "7441"\n' });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.file).toBe(path.join(bundled, 'server.yml'));
    expect(err.key).toBe('port');
    expect(err.message).toBe(
      `Config error in ${path.join(bundled, 'server.yml')} at key "port": expected number, received string`,
    );
  });

  it('names file and key for a file path that does not exist', () => {
    const bundled = folder({ 'server.yml': 'cert: missing.crt\n' });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.key).toBe('cert');
    expect(err.reason).toBe(`file not found: ${path.join(bundled, 'missing.crt')}`);
  });

  it('names the file and line of invalid YAML', () => {
    const bundled = folder({ 'server.yml': 'port: 1\n  name: [unclosed\n' });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.file).toBe(path.join(bundled, 'server.yml'));
    expect(err.message).toMatch(/not valid YAML \(line \d+\)/);
  });

  it('rejects unknown keys by name', () => {
    const bundled = folder({ 'server.yml': 'port: 1\nprot: 2\n' });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.key).toBe('prot');
    expect(err.reason).toBe('unknown key; did you mean "port"?');
  });

  it('never puts a value in the message', () => {
    const bundled = folder({ 'server.yml': 'name: 12345-secret-value\nport: "s3cr3t"\n' });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.message).not.toMatch(/s3cr3t|12345/);
  });

  it('expands ${VAR} and ${VAR:default}, typed when the value is one expression', () => {
    const bundled = folder({ 'server.yml': 'port: ${PORT:7441}\nname: svc-${SUFFIX}\n' });
    const loader = new ConfigLoader({ bundledDir: bundled, env: { SUFFIX: 'x' } });
    expect(loader.load('server', schema)).toEqual({ port: 7441, name: 'svc-x' });
    const withPort = new ConfigLoader({ bundledDir: bundled, env: { SUFFIX: 'y', PORT: '9' } });
    expect(withPort.load('server', schema)).toEqual({ port: 9, name: 'svc-y' });
  });

  it('names the key whose environment variable is missing', () => {
    const bundled = folder({ 'server.yml': 'name: ${NOPE}\n' });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.key).toBe('name');
    expect(err.reason).toBe('NOPE is set neither in the environment nor in values.yml');
  });

  it.each([
    ['empty', ''],
    ['only a comment', '# only a comment\n'],
    ['a YAML null', '~\n'],
  ])('refuses a file that is there but %s, naming it', (_name, content) => {
    const bundled = folder({ 'server.yml': content });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.message).toBe(
      `Config error in ${path.join(bundled, 'server.yml')}: is empty; give its keys, or remove the file to use the defaults`,
    );
  });

  it.each([
    ['a scalar (a file cut inside its first key)', 'enableVerif'],
    ['a list', '- a\n- b\n'],
  ])('refuses a file that is %s', (_name, content) => {
    const bundled = folder({ 'server.yml': content });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.key).toBeUndefined();
    expect(err.reason).toBe('is not a map of keys (is the file cut short?)');
  });

  it('counts further problems without naming their values', () => {
    const bundled = folder({ 'server.yml': 'port: "a"\nname: 3\n' });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.message).toMatch(/\(and 1 more problem\(s\)\)$/);
  });
});

describe('ConfigLoader, light-4j injection', () => {
  const any = () => z.looseObject({});

  it('reads ${a.b:default} from the environment as written, then as light-4j converts the name', () => {
    const bundled = folder({
      'server.yml': 'port: ${server.httpsPort:8443}\nname: ${server.serviceId:svc}\n',
    });
    expect(new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema)).toEqual({
      port: 8443,
      name: 'svc',
    });
    const env = { SERVER_HTTPSPORT: '9443', 'server.serviceId': 'exact' };
    expect(new ConfigLoader({ bundledDir: bundled, env }).load('server', schema)).toEqual({
      port: 9443,
      name: 'exact',
    });
  });

  it('reads values.yml of the config folders after the environment, keeping its types', () => {
    const bundled = folder({
      'server.yml': 'port: ${server.httpsPort:8443}\nname: ${server.serviceId}\n',
      'values.yml': 'server.httpsPort: 9443\nserver.serviceId: from-bundled-values\n',
    });
    const override = folder({ 'values.yml': 'server.serviceId: from-override-values\n' });
    const loader = new ConfigLoader({ bundledDir: bundled, overrideDir: override, env: {} });
    // values.yml is a file like any other: the override folder's replaces the bundled one
    expect(loader.load('server', schema)).toEqual({ port: 8443, name: 'from-override-values' });
    const env = new ConfigLoader({
      bundledDir: bundled,
      env: { SERVER_SERVICEID: 'from-env' },
    });
    expect(env.load('server', schema)).toEqual({ port: 9443, name: 'from-env' });
    const lists = folder({
      'x.yml': 'prefixes: ${security.skipPathPrefixes}\n',
      'values.yml': 'security.skipPathPrefixes:\n  - /a\n  - /b\n',
    });
    expect(new ConfigLoader({ bundledDir: lists, env: {} }).load('x', any)).toEqual({
      prefixes: ['/a', '/b'],
    });
  });

  it('leaves a key out when its expression has an empty default and no value', () => {
    const bundled = folder({ 'server.yml': 'port: 1\nname: ${server.name:}\ncert: x-${a.b:}\n' });
    const loaded = new ConfigLoader({ bundledDir: bundled, env: {} }).raw('server').value;
    expect(loaded).toEqual({ port: 1, cert: 'x-' });
  });

  it("stops with the file's own message for ${name:?message}", () => {
    const bundled = folder({
      'server.yml': 'name: ${server.name:?set server.name in values.yml}\n',
    });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.key).toBe('name');
    expect(err.reason).toBe('set server.name in values.yml');
  });

  it('keeps an unquoted all-digit value that a number would change as the text written', () => {
    const bundled = folder({
      'x.yml': 'a: 0012345\nb: 98765432109876543210\nc: 42\nd: ${SECRET}\n',
    });
    const loader = new ConfigLoader({ bundledDir: bundled, env: { SECRET: '000777' } });
    expect(loader.load('x', any)).toEqual({
      a: '0012345',
      b: '98765432109876543210',
      c: 42,
      d: '000777',
    });
  });

  it('refuses a values.yml that is not a map', () => {
    const bundled = folder({ 'server.yml': 'port: 1\n', 'values.yml': '- a\n' });
    const err = loadError(() =>
      new ConfigLoader({ bundledDir: bundled, env: {} }).load('server', schema),
    );
    expect(err.file).toBe(path.join(bundled, 'values.yml'));
    expect(err.reason).toBe('is not a map of names to values');
  });

  it('finds the first of several names, override folder first (openapi-security before security)', () => {
    const bundled = folder({ 'security.yml': 'a: bundled\n', 'openapi-security.yml': 'a: b2\n' });
    const override = folder({ 'security.yml': 'a: override\n' });
    const names = ['openapi-security', 'security'];
    const loader = new ConfigLoader({ bundledDir: bundled, overrideDir: override, env: {} });
    expect(loader.locate(names).file).toBe(path.join(override, 'security.yml'));
    const both = folder({ 'security.yml': 'a: 1\n', 'openapi-security.yml': 'a: 2\n' });
    expect(
      new ConfigLoader({ bundledDir: bundled, overrideDir: both, env: {} }).locate(names).file,
    ).toBe(path.join(both, 'openapi-security.yml'));
  });

  it('lists the YAML files of the override folder that nothing read', () => {
    const override = folder({
      'server.yml': 'port: 1\n',
      'handler.yml': 'x: 1\n',
      'values.yml': 'a: 1\n',
      'primary.crt': 'x',
    });
    const loader = new ConfigLoader({ bundledDir: folder({}), overrideDir: override, env: {} });
    loader.load('server', schema);
    expect(loader.unreadFiles()).toEqual([path.join(override, 'handler.yml')]);
    expect(new ConfigLoader({ bundledDir: folder({}), env: {} }).unreadFiles()).toEqual([]);
  });
});
