/**
 * The usual headers, read without a split (a token is long, a split scans and copies it): the
 * scheme, one space, printable ASCII without spaces.
 */
const PLAIN_BEARER = /^[Bb][Ee][Aa][Rr][Ee][Rr] [\x21-\x7e]+$/;
const PLAIN_DPOP = /^[Dd][Pp][Oo][Pp] [\x21-\x7e]+$/;

/**
 * The token of an `Authorization: Bearer <token>` header: the scheme in any case, exactly two
 * parts; undefined for anything else (ERR10002, light-4j's MISSING_AUTH_TOKEN).
 */
export function parseBearer(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  if (PLAIN_BEARER.test(header)) return header.slice(7);
  return parseSplit(header, 'bearer');
}

/** The token of an `Authorization: DPoP <token>` header (RFC 9449 section 7.1), likewise. */
export function parseDpop(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  if (PLAIN_DPOP.test(header)) return header.slice(5);
  return parseSplit(header, 'dpop');
}

function parseSplit(header: string, scheme: string): string | undefined {
  const parts = header.trim().split(/\s+/);
  if (parts.length !== 2 || parts[0].toLowerCase() !== scheme || parts[1] === '') {
    return undefined;
  }
  return parts[1];
}
