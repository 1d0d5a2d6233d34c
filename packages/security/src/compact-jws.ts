/**
 * RFC 7515 section 7.1, one canonical spelling only: jose decodes others too, each a miss of the
 * token cache and a way around rules keyed on the token text (docs/security.md, step 4).
 */
const SEGMENTS = /^[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

export function isCanonicalCompactJws(token: string): boolean {
  if (!SEGMENTS.test(token)) return false;
  return token.split('.').every((s) => Buffer.from(s, 'base64url').toString('base64url') === s);
}
