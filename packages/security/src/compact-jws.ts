/**
 * RFC 7515 section 7.1: a compact JWS is three base64url segments without padding. jose decodes
 * other spellings too (padding, and `+` `/` on Node), so one token could be sent as many strings:
 * each would miss the verified-token cache and step around every rule keyed on the token text (the
 * DPoP `ath`, the replay cache). Only the one canonical spelling is accepted: the base64url
 * alphabet, no `=`, no length that no byte string encodes, and zero bits where the last character
 * holds more than the bytes need.
 */
const SEGMENTS = /^([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]*)$/;

/** The bits of the last character that encode no byte, by the segment's length modulo 4. */
const UNUSED_BITS = [0, -1, 0b1111, 0b11];

function sextet(code: number): number {
  if (code >= 97) return code - 71; // a-z: 26-51
  if (code >= 65) return code - 65; // A-Z: 0-25
  if (code >= 48) return code + 4; // 0-9: 52-61
  return code === 45 ? 62 : 63; // '-', '_'
}

function isCanonical(segment: string): boolean {
  const unused = UNUSED_BITS[segment.length % 4];
  if (unused <= 0) return unused === 0;
  return (sextet(segment.charCodeAt(segment.length - 1)) & unused) === 0;
}

/** Three segments, each in canonical base64url. */
export function isCanonicalCompactJws(token: string): boolean {
  const match = SEGMENTS.exec(token);
  return match !== null && isCanonical(match[1]) && isCanonical(match[2]) && isCanonical(match[3]);
}
