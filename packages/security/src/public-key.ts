import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import { ConfigError } from '@chain/config';

/** Key material as a key server or a config file gives it. */
export type KeyMaterial = string | Buffer | KeyObject;

/**
 * An RSA public KeyObject from a PEM X.509 certificate, a PEM public key or a KeyObject. Parsed
 * once, so a verification never parses PEM text.
 */
export function toRsaPublicKey(material: KeyMaterial): KeyObject {
  let key: KeyObject;
  if (typeof material === 'string' || Buffer.isBuffer(material)) {
    const text = material.toString();
    key = text.includes('-----BEGIN CERTIFICATE-----')
      ? new crypto.X509Certificate(text).publicKey
      : crypto.createPublicKey(text);
  } else {
    key = material.type === 'public' ? material : crypto.createPublicKey(material);
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new TypeError(`an RSA key is required, got ${key.asymmetricKeyType ?? 'none'}`);
  }
  return key;
}

/**
 * security.yml `jwt.certificate`: kid -> PEM certificate file, read and parsed at start. A file
 * that cannot be read or parsed stops the service with the file and the key named.
 */
export function loadCertificates(
  certificates: Record<string, string>,
  file = 'security.yml',
): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  for (const [kid, path] of Object.entries(certificates)) {
    try {
      keys.set(kid, toRsaPublicKey(fs.readFileSync(path, 'utf8')));
    } catch (err) {
      const reason =
        (err as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'file not found'
          : 'not an RSA certificate';
      throw new ConfigError(file, `jwt.certificate.${kid}`, `${reason}: ${path}`);
    }
  }
  return keys;
}
