import crypto from 'node:crypto';
import {
  algorithmProblem,
  algorithmsOfKey,
  describeKey,
  isAlgorithm,
  verifySignature,
} from '../src/algorithms';

const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaShort = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });
const pss = crypto.generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
const pssShort = crypto.generateKeyPairSync('rsa-pss', { modulusLength: 1024 });
const p256 = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p384 = crypto.generateKeyPairSync('ec', { namedCurve: 'P-384' });
const ed25519 = crypto.generateKeyPairSync('ed25519');
const ed448 = crypto.generateKeyPairSync('ed448');
const x25519 = crypto.generateKeyPairSync('x25519');

const input = Buffer.from('header.payload');
const pssOptions = {
  padding: crypto.constants.RSA_PKCS1_PSS_PADDING,
  saltLength: crypto.constants.RSA_PSS_SALTLEN_DIGEST,
};

describe('algorithms', () => {
  it.each([
    ['RS256', undefined],
    ['EdDSA', undefined],
    ['none', 'none is never accepted (anyone holding the certificate could sign)'],
    ['NONE', 'NONE is never accepted (anyone holding the certificate could sign)'],
    ['HS256', 'HS256 is never accepted (anyone holding the certificate could sign)'],
    ['hs512', 'hs512 is never accepted (anyone holding the certificate could sign)'],
    ['RS512', 'RS512 is not supported; use RS256, PS256, ES256, EdDSA'],
    ['rs256', 'rs256 is not supported; use RS256, PS256, ES256, EdDSA'],
  ])('algorithmProblem(%s)', (name, problem) => {
    expect(algorithmProblem(name)).toBe(problem);
    expect(isAlgorithm(name)).toBe(problem === undefined);
  });

  it.each([
    ['RSA 2048', rsa.publicKey, ['RS256', 'PS256'], 'RSA 2048 bits'],
    ['RSA 1024', rsaShort.publicKey, [], 'RSA 1024 bits'],
    ['RSA-PSS 2048', pss.publicKey, ['PS256'], 'RSA-PSS 2048 bits'],
    ['RSA-PSS 1024', pssShort.publicKey, [], 'RSA-PSS 1024 bits'],
    ['EC P-256', p256.publicKey, ['ES256'], 'EC prime256v1'],
    ['EC P-384', p384.publicKey, [], 'EC secp384r1'],
    ['Ed25519', ed25519.publicKey, ['EdDSA'], 'ed25519'],
    ['Ed448', ed448.publicKey, ['EdDSA'], 'ed448'],
    ['X25519', x25519.publicKey, [], 'x25519'],
  ])('a %s key verifies %j', (_name, key, algorithms, described) => {
    expect(algorithmsOfKey(key)).toEqual(algorithms);
    expect(describeKey(key)).toBe(described);
  });

  describe('verifySignature', () => {
    it('verifies each algorithm with its key type', () => {
      const rs = crypto.sign('RSA-SHA256', input, rsa.privateKey);
      const ps = crypto.sign('sha256', input, { key: rsa.privateKey, ...pssOptions });
      const es = crypto.sign('sha256', input, { key: p256.privateKey, dsaEncoding: 'ieee-p1363' });
      const ed = crypto.sign(null, input, ed25519.privateKey);
      expect(verifySignature('RS256', rsa.publicKey, input, rs)).toBe(true);
      expect(verifySignature('PS256', rsa.publicKey, input, ps)).toBe(true);
      expect(verifySignature('ES256', p256.publicKey, input, es)).toBe(true);
      expect(verifySignature('EdDSA', ed25519.publicKey, input, ed)).toBe(true);
      // one algorithm's signature is not another's
      expect(verifySignature('PS256', rsa.publicKey, input, rs)).toBe(false);
      expect(verifySignature('RS256', rsa.publicKey, input, ps)).toBe(false);
      // a different input
      expect(verifySignature('ES256', p256.publicKey, Buffer.from('x'), es)).toBe(false);
    });

    it('refuses a DER-encoded ES256 signature (JWS carries r || s)', () => {
      const der = crypto.sign('sha256', input, p256.privateKey);
      expect(verifySignature('ES256', p256.publicKey, input, der)).toBe(false);
    });

    it('answers false, never throws, for a key of the wrong type', () => {
      const ed = crypto.sign(null, input, ed25519.privateKey);
      const es = crypto.sign('sha256', input, { key: p256.privateKey, dsaEncoding: 'ieee-p1363' });
      expect(verifySignature('RS256', p256.publicKey, input, es)).toBe(false);
      expect(verifySignature('ES256', rsa.publicKey, input, Buffer.alloc(64))).toBe(false);
      expect(verifySignature('EdDSA', rsa.publicKey, input, ed)).toBe(false);
      expect(verifySignature('PS256', ed25519.publicKey, input, ed)).toBe(false);
    });
  });
});
