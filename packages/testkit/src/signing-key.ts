import { execFileSync } from 'node:child_process';
import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A JWT signing key as light-oauth2 has one: kid, RSA private key, self-signed certificate. */
export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** PEM X.509 certificate of the public key (what `jwt.certificate` and the key server hold). */
  certificatePem: string;
}

/**
 * Makes a new RSA key and a self-signed certificate for it (openssl, as scripts/gen-certs.sh).
 * About a tenth of a second: make keys once per test file.
 */
export function createSigningKey(kid: string, modulusLength = 2048): SigningKey {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'testkit-key-'));
  try {
    const keyFile = path.join(dir, 'key.pem');
    fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), {
      mode: 0o600,
    });
    const certificatePem = execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-new',
        '-key',
        keyFile,
        '-subj',
        `/CN=testkit jwt key ${kid}`,
        '-days',
        '30',
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return { kid, privateKey, publicKey, certificatePem };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A signing key from PEM files, e.g. certs/primary.key + certs/primary.crt. */
export function loadSigningKey(kid: string, keyFile: string, certFile: string): SigningKey {
  const privateKey = crypto.createPrivateKey(fs.readFileSync(keyFile));
  const certificatePem = fs.readFileSync(certFile, 'utf8');
  return { kid, privateKey, publicKey: crypto.createPublicKey(privateKey), certificatePem };
}

/** Writes a certificate to a temporary file and returns its path (for a jwt.certificate map). */
export function writeCertificate(key: SigningKey, dir?: string): string {
  const folder = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'testkit-cert-'));
  const file = path.join(folder, `${key.kid}.crt`);
  fs.writeFileSync(file, key.certificatePem);
  return file;
}
