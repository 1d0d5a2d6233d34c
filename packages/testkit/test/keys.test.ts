import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CERTS,
  claimsOf,
  configDir,
  devSigningKey,
  mintToken,
  pointLine,
  writeKeyPair,
} from '../src/index.js';

describe('devSigningKey', () => {
  it('is certs/primary.key and primary.crt for kid 100, loaded once', () => {
    const key = devSigningKey('100');
    expect(key.kid).toBe('100');
    expect(key.certificatePem).toBe(fs.readFileSync(path.join(CERTS, 'primary.crt'), 'utf8'));
    expect(devSigningKey('100')).toBe(key);
    expect(devSigningKey('101').certificatePem).not.toBe(key.certificatePem);
  });

  it('signs tokens whose claims claimsOf reads back and whose signature its certificate verifies', () => {
    const key = devSigningKey('100');
    const token = mintToken(key, { clientId: 'c1', scope: ['a.r'], now: 1_700_000_000_000 });
    expect(claimsOf(token)).toMatchObject({
      iss: 'https://localhost:6882',
      aud: 'urn:chain:api',
      client_id: 'c1',
      scope: ['a.r'],
      iat: 1_700_000_000,
      exp: 1_700_000_600,
    });
    const [header, payload, signature] = token.split('.');
    const publicKey = new crypto.X509Certificate(key.certificatePem).publicKey;
    const data = Buffer.from(`${header}.${payload}`);
    expect(crypto.verify('sha256', data, publicKey, Buffer.from(signature, 'base64url'))).toBe(
      true,
    );
  });
});

describe('files of the tests', () => {
  it('writeKeyPair writes <kid>.key (owner-only) and <kid>.crt', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'testkit-test-'));
    writeKeyPair(devSigningKey('101'), dir);
    expect(fs.readdirSync(dir).sort()).toEqual(['101.crt', '101.key']);
    expect(fs.statSync(path.join(dir, '101.key')).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(dir, '101.key'), 'utf8')).toBe(
      fs.readFileSync(path.join(CERTS, 'secondary.key'), 'utf8'),
    );
  });

  it('configDir holds exactly the files given', () => {
    const dir = configDir({ 'server.yml': 'httpsPort: 0\n', 'client.yml': '' });
    expect(fs.readdirSync(dir).sort()).toEqual(['client.yml', 'server.yml']);
    expect(fs.readFileSync(path.join(dir, 'server.yml'), 'utf8')).toBe('httpsPort: 0\n');
  });
});

describe('pointLine', () => {
  it('writes a point as measurement, tags and value', () => {
    const point = {
      measurement: 'svc.request.count',
      tags: { a: '1', b: 'x' },
      fields: { value: 3 },
    };
    expect(pointLine(point)).toBe('svc.request.count a=1,b=x 3');
  });
});
