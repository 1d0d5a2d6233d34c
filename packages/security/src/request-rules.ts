import type { IncomingHttpHeaders } from 'node:http';
import type { JwtClaims } from './claims.js';

/**
 * The one path-prefix matcher (security.yml `skipPathPrefixes`, client.yml `pathPrefixServices`):
 * the value of the longest prefix of `path`, by whole segments. `/public` or `/public/` matches
 * `/public` and `/public/x`, not `/publicity` (light-4j's string prefix turns a typo into an open
 * endpoint); `/` matches every path.
 */
export function pathPrefixMatcher<T>(prefixes: Iterable<[prefix: string, value: T]>) {
  const bases = [...prefixes]
    .sort((a, b) => b[0].length - a[0].length)
    .map(
      ([prefix, value]) => [prefix.endsWith('/') ? prefix.slice(0, -1) : prefix, value] as const,
    );
  return (path: string): T | undefined => {
    for (const [base, value] of bases) {
      if (base === '' || path === base || path.startsWith(base + '/')) return value;
    }
    return undefined;
  };
}

// No control characters: no CR/LF injection.
const SAFE_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function passThroughHeaders(
  claims: JwtClaims,
  mapping: Readonly<Record<string, string>>,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [claim, header] of Object.entries(mapping)) {
    const value = Object.hasOwn(claims, claim) ? claims[claim] : undefined;
    if (value === null || value === undefined) continue;
    const text = Array.isArray(value)
      ? value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' ')
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
    if (SAFE_VALUE.test(text)) headers[header.toLowerCase()] = text;
  }
  return headers;
}

/** Whatever the caller sent is removed first: a caller must not claim `X-User-Id: admin`. */
export function applyPassThrough(
  headers: IncomingHttpHeaders,
  mapping: Readonly<Record<string, string>>,
  values: Readonly<Record<string, string>> = {},
): void {
  for (const header of Object.values(mapping)) delete headers[header.toLowerCase()];
  Object.assign(headers, values);
}
