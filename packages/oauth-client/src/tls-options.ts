import fs from 'node:fs';
import tls from 'node:tls';
import { pemParts, type ClientConfig } from './client-config';

/**
 * client.yml `tls` as the options of every connection (undici's `connect`, which are
 * `tls.connect`'s), read once; the files were checked when client.yml was loaded.
 */
export function tlsOptions(config: ClientConfig['tls']): tls.ConnectionOptions {
  const options: tls.ConnectionOptions = { rejectUnauthorized: true };
  if (config.loadTrustStore && config.trustStore) {
    const own = fs.readFileSync(config.trustStore, 'utf8');
    options.ca = config.loadDefaultTrustStore ? [...tls.rootCertificates, own] : own;
  }
  if (config.tlsVersion) options.minVersion = config.tlsVersion;
  if (!config.verifyHostname) {
    // The chain is still verified; only the name check is skipped, as light-4j's
    // verifyHostname: false does for self-signed certificates.
    options.checkServerIdentity = () => undefined;
  }
  if (config.loadKeyStore && config.keyStore) {
    const { key, cert } = pemParts(fs.readFileSync(config.keyStore, 'utf8'));
    options.key = key;
    options.cert = cert;
  }
  return options;
}
