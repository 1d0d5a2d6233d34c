import type { X509Certificate } from 'node:crypto';

const TYPE = /^[A-Za-z][A-Za-z0-9-]*$|^\d+(\.\d+)+$/;
const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;

/**
 * An RFC 4514 name as its RDNs from the root down, each a sorted set of `TYPE=value`: the type in
 * upper case, the value unescaped without the unescaped spaces around it.
 */
export function parseDn(text: string): string[][] | undefined {
  const chars = Array.from(text);
  const rdns: string[][] = [];
  let rdn: string[] = [];
  let type: string | undefined; // undefined while the type is read, up to its `=`
  let written = '';
  let bytes: number[] = [];
  let kept = 0; // the bytes up to the last one that is not an unescaped space
  for (let i = 0; i <= chars.length; i++) {
    const c = chars[i];
    const boundary = c === undefined || c === ',' || c === '+';
    if (type === undefined) {
      if (boundary) return undefined;
      if (c !== '=') {
        written += c;
        continue;
      }
      type = written.trim();
      written = '';
      if (!TYPE.test(type)) return undefined;
    } else if (boundary) {
      if (kept === 0) return undefined;
      rdn.push(`${type.toUpperCase()}=${Buffer.from(bytes.slice(0, kept)).toString('utf8')}`);
      [type, bytes, kept] = [undefined, [], 0];
      if (c !== '+') {
        rdns.push(rdn.sort());
        rdn = [];
      }
    } else if (c === '\\') {
      if (i + 1 === chars.length) return undefined;
      const hex = chars[i + 1] + (chars[i + 2] ?? '');
      bytes.push(...(HEX_PAIR.test(hex) ? [parseInt(hex, 16)] : Buffer.from(chars[i + 1])));
      i += HEX_PAIR.test(hex) ? 2 : 1;
      kept = bytes.length;
    } else if (bytes.length > 0 || !/\s/.test(c)) {
      bytes.push(...Buffer.from(c));
      if (c !== ' ') kept = bytes.length;
    }
  }
  return rdns.reverse();
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
