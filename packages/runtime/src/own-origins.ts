import net from 'node:net';
import tls from 'node:tls';

/** A DPoP `htu`'s origins when security.yml `dpop.origins` is empty (docs/configuration.md). */
export function ownOrigins(
  protocol: 'https' | 'http',
  port: number,
  ip: string,
  tlsMaterial: tls.SecureContextOptions | undefined,
): string[] {
  const names = tlsMaterial ? certificateNames(tlsMaterial) : [];
  const unspecified = ip === '0.0.0.0' || ip === '::' || ip === '';
  if (!unspecified) names.push(ip);
  // A plain HTTP port with no certificate on every address: the names of this machine's loopback.
  if (names.length === 0) names.push('localhost', '127.0.0.1', '::1');
  const origins = names.flatMap((name) => {
    const host = net.isIPv6(name) ? `[${name}]` : name;
    return URL.parse(`${protocol}://${host}:${port}`)?.origin ?? [];
  });
  return [...new Set(origins)];
}

/** Read from the certificate the server presents, PEM or PKCS12 alike. */
function certificateNames(material: tls.SecureContextOptions): string[] {
  const certificate = new tls.TLSSocket(null as never, {
    secureContext: tls.createSecureContext(material),
    isServer: true,
  }).getCertificate();
  if (!certificate || !('subject' in certificate)) return [];
  const names = (certificate.subjectaltname ?? '')
    .split(', ')
    .flatMap((entry) => /^(?:DNS|IP Address):([^*]+)$/.exec(entry)?.slice(1) ?? []);
  const commonName = certificate.subject?.CN;
  if (names.length === 0 && typeof commonName === 'string' && !commonName.includes('*')) {
    names.push(commonName);
  }
  return names;
}
