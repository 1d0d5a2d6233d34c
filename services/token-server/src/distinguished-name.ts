import type { X509Certificate } from 'node:crypto';

/** `type=value` and the separator after it; a value's escapes are whole (no `\\` at its end). */
const ATTRIBUTE = /\s*([A-Za-z][A-Za-z0-9-]*|\d+(?:\.\d+)+)\s*=((?:\\[^]|[^\\,+])*)([,+]|$)/guy;

/**
 * An RFC 4514 name as its RDNs from the root down, each a sorted set of `TYPE=value`: the type in
 * upper case, the value unescaped without the unescaped spaces around it.
 */
export function parseDn(text: string): string[][] | undefined {
  const rdns: string[][] = [];
  let rdn: string[] = [];
  let separator = ',';
  // Sticky: the attributes follow one another from the start; the last ends the text.
  for (const [, type, written, next] of text.matchAll(ATTRIBUTE)) {
    const value = unescape(written);
    if (value === '') return undefined;
    rdn.push(`${type.toUpperCase()}=${value}`);
    if (next !== '+') {
      rdns.push(rdn.sort());
      rdn = [];
    }
    separator = next;
  }
  return separator === '' ? rdns.reverse() : undefined;
}

/** `\XX` is a byte of the value's UTF-8, `\c` is c; unescaped spaces at either end go. */
function unescape(written: string): string {
  const bytes: number[] = [];
  let kept = 0;
  for (const [token, hex, char] of written.trimStart().matchAll(/\\([0-9A-Fa-f]{2})|\\?([^])/gu)) {
    bytes.push(...(hex ? [parseInt(hex, 16)] : Buffer.from(char)));
    if (token !== ' ') kept = bytes.length;
  }
  return Buffer.from(bytes.slice(0, kept)).toString('utf8');
}

/**
 * Node writes the subject a line per RDN from the root down, escaped as RFC 2253 says, a
 * multi-valued RDN joined by ` + `.
 */
export function subjectMatches(cert: X509Certificate, registered: string): boolean {
  const expected = parseDn(registered);
  const rdns = cert.subject.split('\n').reverse();
  const actual = parseDn(rdns.map((rdn) => rdn.replace(/ \+ /g, '+')).join(','));
  return expected !== undefined && JSON.stringify(expected) === JSON.stringify(actual);
}
