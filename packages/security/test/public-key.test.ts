import crypto from 'node:crypto';
import { createSigningKey } from '@chain/testkit';
import { importPublicKey, toPublicKey, verificationKey } from '../src/public-key.js';

const rsa = createSigningKey('100');
const ec = createSigningKey('ec', { type: 'ec' });
const ed = createSigningKey('ed', { type: 'ed25519' });

describe('toPublicKey and importPublicKey', () => {
  it('read a certificate, a PEM public key (SPKI or PKCS#1), a public KeyObject; importPublicKey a public JWK too', async () => {
    const jwk = rsa.publicKey.export({ format: 'jwk' });
    for (const material of [
      rsa.certificatePem,
      Buffer.from(rsa.certificatePem),
      rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      rsa.publicKey,
    ]) {
      expect(toPublicKey(material).export({ format: 'jwk' })).toEqual(jwk);
      expect((await importPublicKey(material)).export({ format: 'jwk' })).toEqual(jwk);
    }
    for (const key of [rsa, ec, ed]) {
      const public_ = key.publicKey.export({ format: 'jwk' });
      expect((await importPublicKey(public_)).export({ format: 'jwk' })).toEqual(public_);
    }
  });

  it.each([
    [
      'a PKCS#8 private key',
      rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      'a private key, not a certificate or public key',
    ],
    [
      'a PKCS#1 private key',
      rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      'a private key, not a certificate or public key',
    ],
    [
      'an EC private key',
      ec.privateKey.export({ type: 'sec1', format: 'pem' }).toString(),
      'a private key, not a certificate or public key',
    ],
    ['a private KeyObject', rsa.privateKey, 'a private key, not a public key'],
    [
      'a secret KeyObject',
      crypto.createSecretKey(Buffer.alloc(32)),
      'a secret key, not a public key',
    ],
    ['text', 'not a key', 'not a PEM certificate or public key'],
  ])('refuses %s', async (_name, material, reason) => {
    expect(() => toPublicKey(material)).toThrow(new TypeError(reason));
    await expect(importPublicKey(material)).rejects.toThrow(new TypeError(reason));
  });

  it.each([
    ['a private JWK', rsa.privateKey.export({ format: 'jwk' })],
    ['an HMAC JWK', { kty: 'oct', k: 'c2VjcmV0' }],
  ])('importPublicKey refuses %s', async (_name, jwk) => {
    await expect(importPublicKey(jwk)).rejects.toThrow(new TypeError('a private or secret JWK'));
  });
});

describe('verificationKey', () => {
  it('an RSASSA-PSS key is verified as the plain RSA key it is, allowed only what its parameters pin', () => {
    const params: object = { hashAlgorithm: 'sha256', mgf1HashAlgorithm: 'sha256', saltLength: 32 };
    const pss = crypto.generateKeyPairSync('rsa-pss', { modulusLength: 2048, ...params });
    const { key, algorithms } = verificationKey(pss.publicKey, ['RS256', 'PS256']);
    expect(algorithms).toEqual(['PS256']);
    expect(key.asymmetricKeyType).toBe('rsa');
    const data = Buffer.from('signed');
    const signature = crypto.sign('sha256', data, {
      key: pss.privateKey,
      padding: crypto.constants.RSA_PKCS1_PSS_PADDING,
      saltLength: 32,
    });
    const pssVerify = { padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 };
    expect(crypto.verify('sha256', data, { key, ...pssVerify }, signature)).toBe(true);
    const sha384: object = { hashAlgorithm: 'sha384', mgf1HashAlgorithm: 'sha384', saltLength: 48 };
    const other = crypto.generateKeyPairSync('rsa-pss', { modulusLength: 2048, ...sha384 });
    expect(() => verificationKey(other.publicKey, ['PS256'])).toThrow(TypeError);
  });

  it('allows what the key type can do and security.yml allows', () => {
    expect(verificationKey(rsa.publicKey, ['RS256', 'PS256', 'ES256']).algorithms).toEqual([
      'RS256',
      'PS256',
    ]);
    expect(verificationKey(ec.publicKey, ['RS256', 'ES256']).algorithms).toEqual(['ES256']);
    expect(verificationKey(ed.publicKey, ['EdDSA']).algorithms).toEqual(['EdDSA']);
  });

  it('pins the algorithm a JWK names', () => {
    expect(verificationKey(rsa.publicKey, ['RS256', 'PS256'], 'PS256').algorithms).toEqual([
      'PS256',
    ]);
    expect(() => verificationKey(rsa.publicKey, ['RS256'], 'PS256')).toThrow(
      'a RSA 2048 bits key (PS256); jwt.algorithms allows RS256',
    );
    expect(() => verificationKey(rsa.publicKey, ['RS256'], 'HS256')).toThrow(
      'a RSA 2048 bits key (HS256); jwt.algorithms allows RS256',
    );
  });

  it('refuses a key security.yml does not allow, or of no supported type', () => {
    expect(() => verificationKey(ec.publicKey, ['RS256'])).toThrow(
      'a EC prime256v1 key (ES256); jwt.algorithms allows RS256',
    );
    const short = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    expect(() => verificationKey(short, ['RS256'])).toThrow('a RSA 1024 bits key is not supported');
  });
});
