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
const pages = ['README.md', 'CONTRIBUTING.md', 'bench/README.md', ...markdown('bench/notes'), ...markdown('docs')];

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
});
