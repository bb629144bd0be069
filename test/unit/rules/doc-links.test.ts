import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** No page, test or comment points at a document the repository does not contain. */
function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' || d.name.startsWith('.') ? [] : files(p, keep);
    return keep(d.name) ? [p] : [];
  });
}

const markdown = (dir: string) => files(dir, (n) => n.endsWith('.md'));
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  'bench/README.md',
  ...markdown('bench/notes'),
  ...markdown('docs'),
];

describe('documentation links', () => {
  it('every relative link of a page reaches a file or folder of the repository', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(page, 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const href = (m[1] as string).split('#')[0] as string;
        if (!href || /^[a-z]+:/.test(href)) continue;
        if (!existsSync(path.join(path.dirname(page), href))) broken.push(`${page}: ${href}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every document a source, test or script names exists', () => {
    const code = ['src', 'test', 'bench', 'scripts', 'ui/src'].flatMap((d) =>
      files(d, (n) => /\.(ts|tsx|mjs|sh)$/.test(n)),
    );
    const missing: string[] = [];
    for (const file of [...code, '.ci/run']) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\b((?:docs\/[\w./-]+|[A-Z]+)\.md)\b/g)) {
        const doc = m[1] as string;
        if (!existsSync(doc) && !existsSync(path.join(path.dirname(file), doc)))
          missing.push(`${file}: ${doc}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('finds the links it checks', () => {
    expect(readFileSync('README.md', 'utf8')).toContain('](docs/getting-started.md)');
  });

  // Section numbers of an API contract kept outside the repository (the word API, then a
  // section sign and a number) lead a reader nowhere: a rule is pointed at by the document of
  // docs/ that states it. The pattern also finds such a pointer wrapped across comment lines.
  const sectionPointer = /\bAPI(?:\s|\*|\/)*§\s*\d+/;

  it('no text points at a numbered section of a contract the repository does not hold', () => {
    const texts = ['src', 'ui/src', 'test', 'docs', 'bench', 'scripts'].flatMap((d) =>
      files(d, (n) => /\.(ts|tsx|js|mjs|sh|md|json|css|html)$/.test(n)),
    );
    const pointers: string[] = [];
    for (const file of [...texts, 'README.md', 'CONTRIBUTING.md']) {
      const m = sectionPointer.exec(readFileSync(file, 'utf8'));
      if (m) pointers.push(`${file}: ${m[0]}`);
    }
    expect(texts.length).toBeGreaterThan(100);
    expect(pointers).toEqual([]);
  });

  it('finds such a pointer where one is written, on one line or wrapped', () => {
    // Built from parts, so this file does not hold the pointers it plants.
    const section = ['§', '18'].join('');
    expect(sectionPointer.test(`the audit trail (API ${section}).`)).toBe(true);
    expect(sectionPointer.test(`rights now (issue #54, API\n * ${section}), at`)).toBe(true);
    expect(sectionPointer.test(`// API\n// ${section}`)).toBe(true);
    expect(sectionPointer.test('the audit trail (docs/api/audit.md), RFC 6749 §4.1.2')).toBe(false);
  });
});
