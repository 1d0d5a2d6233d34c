import type { X509Certificate } from 'node:crypto';

/** One relative distinguished name: its attributes as `TYPE=value`, sorted (a set). */
type Rdn = string[];

/**
 * A distinguished name in RFC 4514 form (`CN=api-a,O=example`: the most specific RDN first,
 * `,` between RDNs, `+` inside a multi-valued one, `\` escapes) as its RDNs from the root down,
 * each attribute with its type in upper case and its value unescaped; undefined when it is not
 * such a name.
 */
export function parseDn(text: string): Rdn[] | undefined {
  const rdns = splitUnescaped(text, ',');
  if (!rdns) return undefined;
  const parsed: Rdn[] = [];
  for (const rdn of rdns) {
    const attributes = splitUnescaped(rdn, '+');
    if (!attributes) return undefined;
    const pairs: string[] = [];
    for (const attribute of attributes) {
      const eq = attribute.indexOf('=');
      const type = attribute.slice(0, eq).trim();
      const value = unescape(attribute.slice(eq + 1));
      if (eq < 1 || !/^[A-Za-z][A-Za-z0-9-]*$|^\d+(\.\d+)+$/.test(type) || value === undefined) {
        return undefined;
      }
      pairs.push(`${type.toUpperCase()}=${value}`);
    }
    parsed.push(pairs.sort());
  }
  return parsed.reverse();
}

/**
 * Whether the certificate's subject is the registered RFC 4514 name: the same RDNs in the same
 * order, attribute types compared without case, values exactly. Node writes the subject one RDN
 * a line from the root down, escaped as RFC 2253 says, a multi-valued RDN joined by ` + `.
 */
export function subjectMatches(cert: X509Certificate, registered: string): boolean {
  const expected = parseDn(registered);
  const lines = cert.subject.split('\n').reverse();
  const actual = parseDn(lines.map((line) => line.replace(/ \+ /g, '+')).join(','));
  return (
    expected !== undefined &&
    actual !== undefined &&
    JSON.stringify(expected) === JSON.stringify(actual)
  );
}

/** `text` split at each `separator` not escaped by a backslash; undefined for a dangling `\`. */
function splitUnescaped(text: string, separator: string): string[] | undefined {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') {
      if (i + 1 >= text.length) return undefined;
      current += c + text[i + 1];
      i++;
    } else if (c === separator) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

/**
 * An attribute value with its escapes undone (`\,`, `\"`, `\2C` as UTF-8 bytes) and the spaces
 * around it dropped (an escaped one is kept); undefined when empty or cut off after a `\`.
 */
function unescape(written: string): string | undefined {
  const chars = Array.from(written.trimStart());
  while (
    chars.length > 0 &&
    chars[chars.length - 1] === ' ' &&
    !escapedAt(chars, chars.length - 1)
  ) {
    chars.pop();
  }
  if (chars.length === 0) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] !== '\\') {
      bytes.push(...Buffer.from(chars[i], 'utf8'));
      continue;
    }
    if (i + 1 >= chars.length) return undefined;
    const hex = `${chars[i + 1]}${chars[i + 2] ?? ''}`;
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(chars[i + 1], 'utf8'));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Whether the character at `index` follows an odd number of backslashes. */
function escapedAt(chars: string[], index: number): boolean {
  let backslashes = 0;
  for (let i = index - 1; i >= 0 && chars[i] === '\\'; i--) backslashes++;
  return backslashes % 2 === 1;
}
