/**
 * RFC 7515 section 7.1: a compact JWS is three base64url segments without padding. jose decodes
 * other spellings too (padding, and `+` `/` on Node), so one token could be sent as many strings:
 * each would miss the verified-token cache and step around every rule keyed on the token text (the
 * DPoP `ath`, the replay cache). Only the one canonical spelling is accepted: the base64url
 * alphabet, no `=`, and each segment what its bytes encode back to (no length that no byte string
 * encodes, no bits set past the last byte).
 */
const SEGMENTS = /^[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

export function isCanonicalCompactJws(token: string): boolean {
  if (!SEGMENTS.test(token)) return false;
  return token.split('.').every((s) => Buffer.from(s, 'base64url').toString('base64url') === s);
}
