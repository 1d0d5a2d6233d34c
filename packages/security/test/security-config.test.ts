import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigLoader } from '@chain/config';
import { securityConfigSchema } from '../src/security-config';

function load(yaml: string | undefined, files: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'security-yml-'));
  if (yaml !== undefined) fs.writeFileSync(path.join(dir, 'security.yml'), yaml);
  for (const [name, content] of Object.entries(files))
    fs.writeFileSync(path.join(dir, name), content);
  const loader = new ConfigLoader({ bundledDir: dir, overrideDir: '/nonexistent', env: {} });
  return { dir, load: () => loader.load('security', securityConfigSchema) };
}

describe('security.yml', () => {
  it("has light-4j's defaults", () => {
    const { dir, load: run } = load(undefined);
    expect(run()).toEqual({
      enableVerifyJwt: false,
      enableVerifyScope: true,
      enableMockJwt: false,
      jwt: {
        certificate: {
          '100': path.join(dir, 'primary.crt'),
          '101': path.join(dir, 'secondary.crt'),
        },
        clockSkewInSeconds: 60,
        cacheMaxEntries: 10000,
      },
      logJwtToken: true,
      logClientUserScope: false,
      oauthHttp2Support: true,
      enableJwtCache: true,
    });
  });

  it('checks the certificate files only when verification is on', () => {
    const { dir, load: run } = load(
      'enableVerifyJwt: true\njwt:\n  certificate:\n    "100": a.crt\n',
      {
        'a.crt': 'x',
      },
    );
    expect(run().jwt.certificate).toEqual({ '100': path.join(dir, 'a.crt') });
    const missing = load('enableVerifyJwt: true\njwt:\n  certificate:\n    "100": nope.crt\n');
    expect(() => missing.load()).toThrow(
      `at key "jwt.certificate.100": file not found: ${path.join(missing.dir, 'nope.crt')}`,
    );
  });

  it('rejects unknown keys and wrong types', () => {
    expect(() => load('enableVerifyJWT: true\n').load()).toThrow(
      'at key "enableVerifyJWT": unknown key',
    );
    expect(() => load('jwt:\n  clockSkewInSeconds: "60"\n').load()).toThrow(
      'at key "jwt.clockSkewInSeconds"',
    );
  });
});
