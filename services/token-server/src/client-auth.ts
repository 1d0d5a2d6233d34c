import { createHash, timingSafeEqual } from 'node:crypto';

/** The id and secret of an `Authorization: Basic` header (RFC 6749 2.3.1 form-decoded). */
export function basicCredentials(
  header: string | undefined,
): { clientId: string; secret: string } | undefined {
  const match = /^\s*basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    return undefined;
  }
}

/** The id of a Basic header whose secret is the one `secretOf` knows (constant time). */
export function authenticatedId(
  header: string | undefined,
  secretOf: (id: string) => string | undefined,
): string | undefined {
  const credentials = basicCredentials(header);
  const expected = credentials && secretOf(credentials.clientId);
  if (!credentials || expected === undefined) return undefined;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(credentials.secret), digest(expected))
    ? credentials.clientId
    : undefined;
}
