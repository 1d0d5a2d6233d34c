import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@chain/config';
import { createSigningKey, writeCertificate } from '@chain/testkit';
import { loadCertificates, toRsaPublicKey } from '../src/public-key';

const key = createSigningKey('100');

describe('loadCertificates', () => {
  it('parses every certificate of the map into a KeyObject', () => {
    const keys = loadCertificates({ '100': writeCertificate(key) });
    expect(keys.get('100')!.export({ format: 'jwk' })).toEqual(
      key.publicKey.export({ format: 'jwk' }),
    );
  });

  it('names security.yml and the key of a missing file', () => {
    expect(() => loadCertificates({ '101': '/nonexistent/secondary.crt' })).toThrow(
      new ConfigError(
        'security.yml',
        'jwt.certificate.101',
        'file not found: /nonexistent/secondary.crt',
      ),
    );
  });

  it('names security.yml and the key of a file that is not a certificate', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sec-')), 'bad.crt');
    fs.writeFileSync(file, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    expect(() => loadCertificates({ '100': file })).toThrow(
      `Config error in security.yml at key "jwt.certificate.100": not an RSA certificate: ${file}`,
    );
  });
});

describe('toRsaPublicKey', () => {
  it('refuses a key that is not RSA', () => {
    const { publicKey } = require('node:crypto').generateKeyPairSync('ed25519');
    expect(() => toRsaPublicKey(publicKey)).toThrow('an RSA key is required, got ed25519');
  });
});
