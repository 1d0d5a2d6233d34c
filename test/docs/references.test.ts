import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '@chain/testkit';

// A clone of the repository must explain itself: every document a file refers to is in it, and
// nothing refers to documents a clone does not have.
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.endsWith('pnpm-lock.yaml') && fs.existsSync(path.join(ROOT, f)))
  .filter((f) => /\.(md|ts|mjs|cjs|js|json|ya?ml|sh)$|Dockerfile$/.test(f));
const text = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

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

  it('has a README for every package and service', () => {
    const folders = ['packages', 'services'].flatMap((top) =>
      fs.readdirSync(path.join(ROOT, top)).map((name) => `${top}/${name}`),
    );
    expect(folders.filter((f) => !fs.existsSync(path.join(ROOT, f, 'README.md')))).toEqual([]);
  });
});
