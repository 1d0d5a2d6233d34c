import crypto from 'node:crypto';
import { algorithmProblem, algorithmsOfKey, describeKey, isAlgorithm } from '../src/algorithms.js';

const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaShort = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });
const pss = crypto.generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
const pssShort = crypto.generateKeyPairSync('rsa-pss', { modulusLength: 1024 });
const p256 = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p384 = crypto.generateKeyPairSync('ec', { namedCurve: 'P-384' });
const ed25519 = crypto.generateKeyPairSync('ed25519');
const ed448 = crypto.generateKeyPairSync('ed448');
const x25519 = crypto.generateKeyPairSync('x25519');

const pssWith = (options: object) =>
  crypto.generateKeyPairSync('rsa-pss', { modulusLength: 2048, ...options });
const pssSha256 = pssWith({ hashAlgorithm: 'sha256', mgf1HashAlgorithm: 'sha256', saltLength: 32 });
const pssSha512 = pssWith({ hashAlgorithm: 'sha512', mgf1HashAlgorithm: 'sha512' });
const pssMgf1 = pssWith({ hashAlgorithm: 'sha256', mgf1HashAlgorithm: 'sha512' });
const pssSalt = pssWith({ hashAlgorithm: 'sha256', mgf1HashAlgorithm: 'sha256', saltLength: 64 });

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
    // the PSS parameters a key pins must be PS256's, as jose checks them
    ['RSA-PSS SHA-256, salt 32', pssSha256.publicKey, ['PS256'], 'RSA-PSS 2048 bits'],
    ['RSA-PSS SHA-512', pssSha512.publicKey, [], 'RSA-PSS 2048 bits'],
    ['RSA-PSS SHA-256 with MGF1 SHA-512', pssMgf1.publicKey, [], 'RSA-PSS 2048 bits'],
    ['RSA-PSS salt 64', pssSalt.publicKey, [], 'RSA-PSS 2048 bits'],
    ['EC P-256', p256.publicKey, ['ES256'], 'EC prime256v1'],
    ['EC P-384', p384.publicKey, [], 'EC secp384r1'],
    ['Ed25519', ed25519.publicKey, ['EdDSA'], 'ed25519'],
    ['Ed448', ed448.publicKey, ['EdDSA'], 'ed448'],
    ['X25519', x25519.publicKey, [], 'x25519'],
  ])('a %s key verifies %j', (_name, key, algorithms, described) => {
    expect(algorithmsOfKey(key)).toEqual(algorithms);
    expect(describeKey(key)).toBe(described);
  });
});
