import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@chain/errors';
import { configFile, loadConfigSource, z } from '../src/index.js';

// A library's own config file (outside a service's config folders): a path or its keys.
const schema = configFile(
  ({ path: resolved }) =>
    z.strictObject({ port: z.number().default(1), cert: resolved().optional() }),
  { light4j: { enableHttp2: { note: 'not here' } } },
);

describe('loadConfigSource', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-source-'));
  fs.writeFileSync(path.join(dir, 'lib.yml'), 'port: 2\ncert: ${LIB_CERT:a.crt}\n');

  it('reads a path, its relative paths against its folder, ${…} expanded', () => {
    const source = path.join(dir, 'lib.yml');
    expect(loadConfigSource(source, 'lib', schema)).toEqual({
      value: { port: 2, cert: path.join(dir, 'a.crt') },
      file: source,
    });
  });

  it('checks keys as a file of that name, paths against the working folder; warnings to the logger', () => {
    const warned: [object, string][] = [];
    const logger = { warn: (fields: object, message: string) => warned.push([fields, message]) };
    const keys = { cert: 'b.crt', enableHttp2: true };
    expect(loadConfigSource(keys, 'lib', schema, logger)).toEqual({
      value: { port: 1, cert: path.resolve('b.crt') },
      file: 'lib.yml',
    });
    expect(warned).toEqual([
      [
        { file: 'lib.yml', key: 'enableHttp2' },
        'lib.yml key "enableHttp2": light-4j key not supported here; ignored (not here)',
      ],
    ]);
    expect(() => loadConfigSource({ port: 'x' }, 'lib', schema)).toThrow(
      new ConfigError('lib.yml', 'port', 'expected number, received string'),
    );
  });

  it('refuses a path that is not there', () => {
    expect(() => loadConfigSource(path.join(dir, 'none.yml'), 'lib', schema)).toThrow(
      new ConfigError(
        path.join(dir, 'none.yml'),
        undefined,
        'file not found in the config folders',
      ),
    );
  });
});
