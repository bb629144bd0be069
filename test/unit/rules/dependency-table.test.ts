import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** Every runtime dependency has its line in CONTRIBUTING.md's dependency table, and only those. */
describe("CONTRIBUTING.md's dependency table", () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };
  const readme = readFileSync('CONTRIBUTING.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Dependencies'));
  const rows = [...section.matchAll(/^\| ([^|]+) \| [^|]+ \|$/gm)]
    .map((m) => (m[1] as string).trim())
    .filter((name) => name !== 'package' && !name.startsWith('---'));
  const named = new Set(rows.flatMap((r) => r.split(',').map((n) => n.trim())));

  it('names every runtime dependency with a reason', () => {
    const missing = Object.keys(pkg.dependencies).filter((d) => !named.has(d));
    expect(missing).toEqual([]);
  });

  it('names no package that is not a runtime dependency', () => {
    const extra = [...named].filter((n) => !Object.hasOwn(pkg.dependencies, n));
    expect(extra).toEqual([]);
  });
});
