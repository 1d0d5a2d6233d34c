import fs from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import type { ClientConfig } from './client-config';

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----/g;

/**
 * The TLS options client.yml describes, read once: the trust store (PEM CA certificates, and
 * the system's with `loadDefaultTrustStore`), hostname verification, the lowest TLS version,
 * and for two-way TLS the key store (a PEM with the private key and the certificate chain).
 */
export function tlsOptions(config: ClientConfig['tls']): https.AgentOptions {
  const options: https.AgentOptions = { rejectUnauthorized: true };
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
    const pem = fs.readFileSync(config.keyStore, 'utf8');
    const blocks = pem.match(PEM_BLOCK) ?? [];
    options.key = blocks.filter((b) => /PRIVATE KEY-----/.test(b.split('\n')[0])).join('\n');
    options.cert = blocks.filter((b) => b.startsWith('-----BEGIN CERTIFICATE')).join('\n');
  }
  return options;
}

/** One keep-alive HTTPS agent for all calls a service makes with its client.yml. */
export function createHttpsAgent(config: ClientConfig['tls']): https.Agent {
  return new https.Agent({ ...tlsOptions(config), keepAlive: true, maxSockets: 256 });
}
