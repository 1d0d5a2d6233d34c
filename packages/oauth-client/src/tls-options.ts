import fs from 'node:fs';
import tls from 'node:tls';
import type { ClientConfig } from './client-config';

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----/g;

/**
 * client.yml `tls` as the TLS options of every connection the client makes (undici's `connect`
 * options, which are `tls.connect`'s), read once: the trust store (PEM CA certificates, and the
 * system's with `loadDefaultTrustStore`; the system's alone without `loadTrustStore`), hostname
 * verification, the lowest TLS version (`tlsVersion`), and for two-way TLS the key store (a PEM
 * with the private key and the certificate chain). The files were checked when client.yml was
 * loaded.
 */
export function tlsOptions(config: ClientConfig['tls']): tls.ConnectionOptions {
  const options: tls.ConnectionOptions = { rejectUnauthorized: true };
  if (config.loadTrustStore && config.trustStore) {
    const own = fs.readFileSync(config.trustStore, 'utf8');
    options.ca = config.loadDefaultTrustStore ? [...tls.rootCertificates, own] : own;
  }
  if (config.tlsVersion) options.minVersion = config.tlsVersion;
  if (!config.verifyHostname) {
    // The chain is still verified against the trust store; only the name check is skipped,
    // as light-4j's verifyHostname: false does for self-signed certificates.
    options.checkServerIdentity = () => undefined;
  }
  if (config.loadKeyStore && config.keyStore) {
    const { key, cert } = pemParts(fs.readFileSync(config.keyStore, 'utf8'));
    options.key = key;
    options.cert = cert;
  }
  return options;
}

/** The private key and the certificates of a PEM file, each as PEM text ('' when none). */
export function pemParts(pem: string): { key: string; cert: string } {
  const blocks = pem.match(PEM_BLOCK) ?? [];
  return {
    key: blocks.filter((b) => /PRIVATE KEY-----/.test(b.split('\n')[0])).join('\n'),
    cert: blocks.filter((b) => b.startsWith('-----BEGIN CERTIFICATE')).join('\n'),
  };
}
