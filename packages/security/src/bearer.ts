/** The scheme in any case, exactly two parts (light-4j's MISSING_AUTH_TOKEN otherwise). */
const parser =
  (plain: RegExp, scheme: string) =>
  (header: string | string[] | undefined): string | undefined => {
    if (typeof header !== 'string') return undefined;
    // The usual header, read without a split (a split scans and copies a long token).
    if (plain.test(header)) return header.slice(scheme.length + 1);
    const parts = header.trim().split(/\s+/);
    const fits = parts.length === 2 && parts[0].toLowerCase() === scheme && parts[1] !== '';
    return fits ? parts[1] : undefined;
  };

export const parseBearer = parser(/^[Bb][Ee][Aa][Rr][Ee][Rr] [\x21-\x7e]+$/, 'bearer');
export const parseDpop = parser(/^[Dd][Pp][Oo][Pp] [\x21-\x7e]+$/, 'dpop');
