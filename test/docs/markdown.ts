// What a Markdown file links to and which anchors it has, as GitHub renders it: enough of
// CommonMark for the repository's own documents (ATX headings, inline links and images, fenced
// and inline code), no more.

/** The text with fenced code blocks blanked, line breaks kept. */
function withoutFences(text: string): string {
  let fence: string | null = null;
  const lines = text.split('\n').map((line) => {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && opener) {
      fence = opener;
      return '';
    }
    if (fence !== null) {
      if (line.trim().startsWith(fence[0].repeat(fence.length)) && /^ {0,3}[`~]+\s*$/.test(line)) {
        fence = null;
      }
      return '';
    }
    return line;
  });
  return lines.join('\n');
}

/** The text with fenced code blocks and inline code spans blanked, line breaks kept. */
export function withoutCode(text: string): string {
  // A code span: a run of backticks, then anything up to the same run (it may wrap lines).
  return withoutFences(text).replace(/(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g, (span) =>
    span.replace(/[^\n]/g, ' '),
  );
}

/** GitHub's anchor of a heading's text: lower case, punctuation dropped, each space a `-`. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or an image: its text
    .replace(/`/g, '')
    .replace(/\*/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a file's headings, a repeated one numbered as GitHub does (`x`, `x-1`, …). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of withoutFences(text).split('\n')) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count ? `${base}-${count}` : base);
  }
  return found;
}

export interface Link {
  line: number;
  target: string;
}

/** Every inline link and image target outside code, with its line. */
export function links(text: string): Link[] {
  const prose = withoutCode(text);
  const found: Link[] = [];
  for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const line = prose.slice(0, m.index).split('\n').length;
    found.push({ line, target: m[1] });
  }
  return found;
}

/** A target that leaves the repository (a URL with a scheme): not checked here. */
export const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);
