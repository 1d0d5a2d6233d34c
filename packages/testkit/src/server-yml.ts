import { CERTS } from './paths.js';

/**
 * server.yml of a service under test: its id, loopback, any free port (httpsPort 0), the
 * development server certificate; `keys` adds keys or replaces these (`httpsPort`, `framework`,
 * `workers`, …), in place.
 */
export function serverYml(
  serviceId: string,
  keys: Record<string, string | number | boolean> = {},
): string {
  const all = {
    serviceId,
    ip: '127.0.0.1',
    httpsPort: 0,
    keyFile: `${CERTS}/server.key`,
    certFile: `${CERTS}/server.crt`,
    ...keys,
  };
  return Object.entries(all)
    .map(([key, value]) => `${key}: ${value}\n`)
    .join('');
}
