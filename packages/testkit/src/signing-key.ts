import { execFileSync } from 'node:child_process';
import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CERTS, DEV_KEYS, type DevKid } from './paths.js';

/** The key types a test signs with, and the JWS algorithm each signs by default. */
export type KeyType = 'rsa' | 'ec' | 'ed25519';
export type SigningAlgorithm = 'RS256' | 'PS256' | 'ES256' | 'EdDSA';
const DEFAULT_ALG: Record<KeyType, SigningAlgorithm> = {
  rsa: 'RS256',
  ec: 'ES256',
  ed25519: 'EdDSA',
};

/** A JWT signing key as light-oauth2 has one: kid, private key, self-signed certificate. */
export interface SigningKey {
  kid: string;
  /** The algorithm tokens of this key carry in their header (RS256 for RSA keys). */
  alg: SigningAlgorithm;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** PEM X.509 certificate of the public key (what `jwt.certificate` and the key server hold). */
  certificatePem: string;
}

/**
 * Makes a new key and a self-signed certificate for it (openssl, as scripts/gen-certs.sh): RSA
 * (2048 bits unless told), EC P-256 or Ed25519. About a tenth of a second for RSA: make keys once
 * per test file.
 */
export function createSigningKey(
  kid: string,
  options: number | { type?: KeyType; modulusLength?: number; alg?: SigningAlgorithm } = {},
): SigningKey {
  const {
    type = 'rsa',
    modulusLength = 2048,
    alg,
  } = typeof options === 'number' ? { modulusLength: options } : options;
  const { privateKey, publicKey } =
    type === 'rsa'
      ? crypto.generateKeyPairSync('rsa', { modulusLength })
      : type === 'ec'
        ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : crypto.generateKeyPairSync('ed25519');
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
    return { kid, alg: alg ?? DEFAULT_ALG[type], privateKey, publicKey, certificatePem };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A signing key from PEM files, e.g. certs/primary.key + certs/primary.crt. */
export function loadSigningKey(kid: string, keyFile: string, certFile: string): SigningKey {
  const privateKey = crypto.createPrivateKey(fs.readFileSync(keyFile));
  const certificatePem = fs.readFileSync(certFile, 'utf8');
  const alg = DEFAULT_ALG[privateKey.asymmetricKeyType as KeyType] ?? 'RS256';
  return { kid, alg, privateKey, publicKey: crypto.createPublicKey(privateKey), certificatePem };
}

const devKeys = new Map<DevKid, SigningKey>();

/** A development signing key of scripts/gen-certs.sh (100: certs/primary.*, 101: secondary), read once. */
export function devSigningKey(kid: DevKid): SigningKey {
  let key = devKeys.get(kid);
  if (!key) {
    const file = path.join(CERTS, DEV_KEYS[kid]);
    key = loadSigningKey(kid, `${file}.key`, `${file}.crt`);
    devKeys.set(kid, key);
  }
  return key;
}

/** Writes a certificate to a temporary file and returns its path (for a jwt.certificate map). */
export function writeCertificate(key: SigningKey, dir?: string): string {
  const folder = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'testkit-cert-'));
  const file = path.join(folder, `${key.kid}.crt`);
  fs.writeFileSync(file, key.certificatePem);
  return file;
}

/**
 * Writes the key and its certificate as `<kid>.key` (PKCS #8 PEM, owner-only) and `<kid>.crt` in
 * `dir`: the files a token server signs with and serves (token-server.yml signing, certificates).
 */
export function writeKeyPair(key: SigningKey, dir: string): void {
  fs.writeFileSync(
    path.join(dir, `${key.kid}.key`),
    key.privateKey.export({ type: 'pkcs8', format: 'pem' }),
    { mode: 0o600 },
  );
  writeCertificate(key, dir);
}
