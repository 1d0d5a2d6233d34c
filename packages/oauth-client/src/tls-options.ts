import fs from 'node:fs';
import https from 'node:https';
import type { ClientConfig } from './client-config';

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----/g;

/**
 * The TLS options client.yml describes, read once: the trust store (PEM CA certificates),
 * hostname verification, and for two-way TLS the key store (a PEM with the private key and the
 * certificate chain).
 */
export function tlsOptions(tls: ClientConfig['tls']): https.AgentOptions {
  const options: https.AgentOptions = { rejectUnauthorized: true };
  if (tls.loadTrustStore && tls.trustStore) options.ca = fs.readFileSync(tls.trustStore, 'utf8');
  if (!tls.verifyHostname) {
    // The chain is still verified against the trust store; only the name check is skipped,
    // as light-4j's verifyHostname: false does for self-signed certificates.
    options.checkServerIdentity = () => undefined;
  }
  if (tls.loadKeyStore && tls.keyStore) {
    const pem = fs.readFileSync(tls.keyStore, 'utf8');
    const blocks = pem.match(PEM_BLOCK) ?? [];
    options.key = blocks.filter((b) => /PRIVATE KEY-----/.test(b.split('\n')[0])).join('\n');
    options.cert = blocks.filter((b) => b.startsWith('-----BEGIN CERTIFICATE')).join('\n');
  }
  return options;
}

/** One keep-alive HTTPS agent for all calls a service makes with its client.yml. */
export function createHttpsAgent(tls: ClientConfig['tls']): https.Agent {
  return new https.Agent({ ...tlsOptions(tls), keepAlive: true, maxSockets: 256 });
}
