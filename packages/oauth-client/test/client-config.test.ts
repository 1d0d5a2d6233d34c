import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigLoader } from '@chain/config';
import { clientConfigSchema, secretConfigSchema } from '../src';

function load(name: string, text: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-cfg-'));
  fs.writeFileSync(path.join(dir, `${name}.yml`), text);
  const loader = new ConfigLoader({ bundledDir: dir, overrideDir: '/nonexistent', env: {} });
  return {
    dir,
    load: <T>(schema: Parameters<typeof loader.load<T>>[1]) => loader.load(name, schema),
  };
}

describe('client.yml', () => {
  it('has the documented defaults when empty', () => {
    const { load: l } = load('client', 'tls:\n  loadTrustStore: false\n');
    expect(l(clientConfigSchema)).toEqual({
      tls: { verifyHostname: true, loadTrustStore: false, loadKeyStore: false },
      request: { timeout: 3000 },
      oauth: {
        token: {
          tokenRenewBeforeExpired: 60000,
          expiredRefreshRetryDelay: 2000,
          earlyRefreshRetryDelay: 4000,
        },
        key: { uri: '/oauth2/key', jwk: false },
      },
    });
  });

  it('a store that is switched on must be named and must exist', () => {
    expect(() => load('client', 'tls: {}\n').load(clientConfigSchema)).toThrow(
      /client\.yml at key "tls\.trustStore": is required/,
    );
    expect(() =>
      load(
        'client',
        'tls:\n  loadTrustStore: false\n  loadKeyStore: true\n  keyStore: nope.pem\n',
      ).load(clientConfigSchema),
    ).toThrow(/at key "tls\.keyStore": file not found: .*nope\.pem/);
  });
});

describe('secret.yml', () => {
  it('holds the three secrets', () => {
    const { load: l } = load('secret', 'clientCredentialsClientSecret: s1\nkeyClientSecret: s2\n');
    expect(l(secretConfigSchema)).toEqual({
      clientCredentialsClientSecret: 's1',
      keyClientSecret: 's2',
    });
  });
});
