import { StatusError } from '@chain/errors';

/**
 * The token of an `Authorization: Bearer <token>` header. The scheme is case-insensitive and the
 * header must be exactly two parts; anything else is ERR10002 (light-4j's MISSING_AUTH_TOKEN).
 */
export function extractBearer(header: string | string[] | undefined): string {
  const token = parseBearer(header);
  if (token === undefined) throw new StatusError('ERR10002');
  return token;
}

/** `Bearer <token>` as clients send it: one space, printable ASCII without spaces after it. */
const PLAIN_BEARER = /^[Bb][Ee][Aa][Rr][Ee][Rr] [\x21-\x7e]+$/;
/** `DPoP <token>` as clients send it (RFC 9449 section 7.1; the scheme is case-insensitive). */
const PLAIN_DPOP = /^[Dd][Pp][Oo][Pp] [\x21-\x7e]+$/;

/** Like extractBearer, but undefined instead of an error. */
export function parseBearer(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  // The usual header, without the split: a token is long, the split scans and copies it.
  if (PLAIN_BEARER.test(header)) return header.slice(7);
  return parseSplit(header, 'bearer');
}

/**
 * The token of an `Authorization: DPoP <token>` header (a DPoP-bound token, whose proof is in
 * the `DPoP` header), under the same rules as Bearer; undefined for anything else.
 */
export function parseDpop(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  if (PLAIN_DPOP.test(header)) return header.slice(5);
  return parseSplit(header, 'dpop');
}

/** A header in another form than the usual one: extra spaces, a scheme in another case. */
function parseSplit(header: string, scheme: string): string | undefined {
  const parts = header.trim().split(/\s+/);
  if (parts.length !== 2 || parts[0].toLowerCase() !== scheme || parts[1] === '') {
    return undefined;
  }
  return parts[1];
}
