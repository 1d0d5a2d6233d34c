import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '@chain/testkit';
import { anchors, isExternal, links, slug, withoutCode } from './markdown.js';

// A clone of the repository must explain itself: every document a file refers to is in it, and
// nothing refers to documents a clone does not have.
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.endsWith('pnpm-lock.yaml') && fs.existsSync(path.join(ROOT, f)))
  .filter((f) => /\.(md|ts|mjs|cjs|js|json|ya?ml|sh)$|Dockerfile$/.test(f));
const text = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const markdown = tracked.filter((f) => f.endsWith('.md'));
/** What a clone has: every tracked file and every folder above one. */
const inClone = new Set(
  execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .flatMap((f) => f.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'))),
);
const lineCount = (file: string) => text(file).trimEnd().split('\n').length;

/** Every relative link of `file` that does not resolve: `file:line: target (why)`. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const { line, target } of links(text(file))) {
    if (isExternal(target)) continue;
    const hash = target.indexOf('#');
    const ref = decodeURI(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const resolved = ref
      ? path.posix.normalize(
          ref.startsWith('/') ? ref.slice(1) : path.posix.join(path.posix.dirname(file), ref),
        )
      : file;
    const at = `${file}:${line}: ${target}`;
    if (!inClone.has(resolved.replace(/\/$/, ''))) {
      broken.push(`${at} (no such file in the repository)`);
    } else if (anchor !== undefined && !resolved.endsWith('.md')) {
      broken.push(`${at} (an anchor into a file that is not Markdown)`);
    } else if (anchor !== undefined && !anchors(text(resolved)).has(anchor)) {
      broken.push(`${at} (no such heading in ${resolved})`);
    }
  }
  return broken;
}

describe('the repository’s documents', () => {
  it('cites no document a clone does not have (the specification, the design card, issues)', () => {
    const offending = tracked.flatMap((file) =>
      text(file)
        .split('\n')
        .map((line, i) => ({ file, line: i + 1, text: line }))
        .filter(({ text: l }) => /SPEC\.md|DESIGN\.md|docs\/compose\.md|\bissue [0-9]/i.test(l)),
    );
    expect(offending).toEqual([]);
  });

  it('has every Markdown document a file names', () => {
    // Reports the container test writes under the git-ignored .run/ (not documents of a clone).
    const generated = (ref: string) => ref.startsWith('.run/') || ref === 'images.md';
    const missing: string[] = [];
    for (const file of tracked) {
      for (const [ref] of text(file).matchAll(/[A-Za-z0-9_./-]+\.md\b/g)) {
        if (generated(ref)) continue;
        const candidates = [path.join(ROOT, ref), path.join(ROOT, path.dirname(file), ref)];
        if (!candidates.some((c) => fs.existsSync(c))) missing.push(`${file}: ${ref}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('names, in the text of any file, only sections its document has: a document, a comma and the quoted heading', () => {
    const missing: string[] = [];
    for (const file of tracked) {
      for (const [, ref, heading] of text(file).matchAll(/([A-Za-z0-9_./-]+\.md),? "([^"]+)"/g)) {
        const doc = [ref, path.join(path.dirname(file), ref)].find((f) => inClone.has(f));
        if (!doc || !anchors(text(doc)).has(slug(heading)))
          missing.push(`${file}: ${ref} ${heading}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('links only to files the repository has, and to headings those files have', () => {
    expect(markdown).toEqual(expect.arrayContaining(['README.md', 'docs/benchmarks.md']));
    expect(markdown.flatMap(brokenLinks)).toEqual([]);
  });

  it('keeps the README to 300 lines and docs/benchmarks.md to 250: documents a reader finishes', () => {
    expect(lineCount('README.md')).toBeLessThanOrEqual(300);
    expect(lineCount('docs/benchmarks.md')).toBeLessThanOrEqual(250);
  });

  it('has a README for every package and service', () => {
    const folders = ['packages', 'services'].flatMap((top) =>
      fs.readdirSync(path.join(ROOT, top)).map((name) => `${top}/${name}`),
    );
    expect(folders.filter((f) => !fs.existsSync(path.join(ROOT, f, 'README.md')))).toEqual([]);
  });
});

describe('the link checker', () => {
  it("makes GitHub's anchors: lower case, punctuation dropped, spaces to hyphens, code unquoted", () => {
    expect(slug('The HTTP edges (`http-server.ts`)')).toBe('the-http-edges-http-serverts');
    expect(slug('Locally: `pnpm start -- --mtls` (or `--dpop`)')).toBe(
      'locally-pnpm-start------mtls-or---dpop',
    );
    expect(slug('api_a.yml, api_b.yml (chain services)')).toBe('api_ayml-api_byml-chain-services');
    expect(slug('Why 1.1× the peer is **missed**')).toBe('why-11-the-peer-is-missed');
    expect(slug('[Bound tokens](docs/zero-trust.md): what a service accepts')).toBe(
      'bound-tokens-what-a-service-accepts',
    );
  });

  it('numbers a repeated heading and ignores headings and links inside code', () => {
    const doc = [
      '# Title',
      '## Metrics',
      '```yaml',
      '# server.yml',
      '[not a link](README.md)',
      '```',
      '## Metrics',
      'See [the first](#metrics) and `[code](README.md)`, [the second](#metrics-1) and',
      '[a link over',
      'two lines](docs/security.md#y) ![a picture](a.svg "title")',
    ].join('\n');
    expect([...anchors(doc)]).toEqual(['title', 'metrics', 'metrics-1']);
    expect(links(doc)).toEqual([
      { line: 8, target: '#metrics' },
      { line: 8, target: '#metrics-1' },
      { line: 9, target: 'docs/security.md#y' },
      { line: 10, target: 'a.svg' },
    ]);
    expect(withoutCode('a `b` c\n```\nd\n```').split('\n')).toEqual(['a     c', '', '', '']);
    expect(isExternal('https://github.com/panva/jose')).toBe(true);
    expect(isExternal('docs/architecture.md#b')).toBe(false);
  });
});
