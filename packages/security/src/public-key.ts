import crypto, { KeyObject, type JsonWebKey } from 'node:crypto';
import { algorithmsOfKey, describeKey, isAlgorithm, type Algorithm } from './algorithms.js';

export type KeyMaterial = string | Buffer | KeyObject | JsonWebKey;

export interface VerificationKey {
  readonly key: KeyObject;
  readonly algorithms: readonly Algorithm[];
}

const PEM_PUBLIC = /-----BEGIN (PUBLIC KEY|RSA PUBLIC KEY)-----/;
const PEM_CERTIFICATE = '-----BEGIN CERTIFICATE-----';
const PEM_PRIVATE = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/** A private key is refused in any form: in a verifier's config it is a leak. */
export function toPublicKey(material: string | Buffer | KeyObject): KeyObject {
  if (material instanceof KeyObject) {
    if (material.type !== 'public') throw new TypeError(`a ${material.type} key, not a public key`);
    return material;
  }
  const text = material.toString();
  if (PEM_PRIVATE.test(text)) throw new TypeError('a private key, not a certificate or public key');
  if (text.includes(PEM_CERTIFICATE)) return new crypto.X509Certificate(text).publicKey;
  if (PEM_PUBLIC.test(text)) return crypto.createPublicKey(text);
  throw new TypeError('not a PEM certificate or public key');
}

export async function importPublicKey(material: KeyMaterial): Promise<KeyObject> {
  if (typeof material === 'string' || Buffer.isBuffer(material) || material instanceof KeyObject) {
    return toPublicKey(material);
  }
  // node:crypto would take the public half of a private JWK: refused first.
  if ('d' in material || material.kty === 'oct') throw new TypeError('a private or secret JWK');
  try {
    return crypto.createPublicKey({ key: material, format: 'jwk' });
  } catch {
    throw new TypeError('not a public JWK of RSA, EC or OKP');
  }
}

/**
 * The same key as plain RSA (rsaEncryption): jose 6 verifies through WebCrypto, which cannot
 * import an RSASSA-PSS SubjectPublicKeyInfo; what the key allows is read from the original
 * (`algorithmsOfKey`: its hash pinned). The RSAPublicKey is the SPKI's last BIT STRING.
 */
function asRsa(key: KeyObject): KeyObject {
  if (key.asymmetricKeyType !== 'rsa-pss') return key;
  const der = key.export({ type: 'spki', format: 'der' });
  let at = 0;
  const header = () => {
    at += 1; // tag
    let length = der[at++];
    if (length & 0x80) {
      const bytes = length & 0x7f;
      length = der.readUIntBE(at, bytes);
      at += bytes;
    }
    return length;
  };
  header(); // SubjectPublicKeyInfo
  const algorithm = header(); // AlgorithmIdentifier, skipped
  at += algorithm;
  const length = header(); // BIT STRING: an unused-bits byte, then RSAPublicKey
  const pkcs1 = der.subarray(at + 1, at + length);
  return crypto.createPublicKey({ key: pkcs1, format: 'der', type: 'pkcs1' });
}

/** `pinned`: a JWK's `alg`. A TypeError saying why when nothing is left. */
export function verificationKey(
  material: string | Buffer | KeyObject,
  allowed: readonly Algorithm[],
  pinned?: unknown,
): VerificationKey {
  const key = toPublicKey(material);
  const byType = algorithmsOfKey(key);
  if (byType.length === 0) throw new TypeError(`a ${describeKey(key)} key is not supported`);
  let algorithms = byType.filter((alg) => allowed.includes(alg));
  if (pinned !== undefined) {
    algorithms = isAlgorithm(pinned) ? algorithms.filter((alg) => alg === pinned) : [];
  }
  if (algorithms.length === 0) {
    const what = pinned === undefined ? byType.join(', ') : String(pinned);
    throw new TypeError(
      `a ${describeKey(key)} key (${what}); jwt.algorithms allows ${allowed.join(', ')}`,
    );
  }
  return { key: asRsa(key), algorithms };
}
