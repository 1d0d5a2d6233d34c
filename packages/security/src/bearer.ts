export type Scheme = 'bearer' | 'dpop';

// The usual header, read without a split (a split scans and copies a long token).
const PLAIN = /^(bearer|dpop) ([\x21-\x7e]+)$/i;

/** `Bearer` or `DPoP` in any case, exactly two parts (light-4j's MISSING_AUTH_TOKEN otherwise). */
export function parseCredentials(
  header: string | string[] | undefined,
): { scheme: Scheme; token: string } | undefined {
  if (typeof header !== 'string') return undefined;
  const plain = PLAIN.exec(header);
  const [name, token, ...more] = plain ? plain.slice(1) : header.trim().split(/\s+/);
  const scheme = name.toLowerCase();
  if (more.length > 0 || !token || (scheme !== 'bearer' && scheme !== 'dpop')) return undefined;
  return { scheme, token };
}
