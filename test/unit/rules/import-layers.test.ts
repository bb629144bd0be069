import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layer rule of docs/architecture.md: a file of `src/` imports from its own layer or
 * from one listed before it, never from one after it. Type-only imports count too.
 */
function layerOrder(): string[] {
  const doc = readFileSync('docs/architecture.md', 'utf8');
  const table = doc.slice(doc.indexOf('<!-- layers:begin -->'), doc.indexOf('<!-- layers:end -->'));
  return [...table.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1] as string);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(p);
    return /\.ts$/.test(d.name) ? [p] : [];
  });
}

/** `src/<layer>/…` or a top-level file of `src/` (its own layer). */
const layerOf = (file: string) => path.normalize(file).split(path.sep)[1]?.replace(/\.js$/, '.ts') ?? '';

const IMPORT =
  /(?:^|\s)(?:import|export)\s[^;]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

describe('import layers', () => {
  const order = layerOrder();
  const rank = new Map(order.map((l, i) => [l, i]));
  const files = sourceFiles('src');

  it('names every folder and top-level file of src/ in docs/architecture.md', () => {
    const layers = new Set(files.map(layerOf));
    expect([...layers].filter((l) => !rank.has(l)).sort()).toEqual([]);
    expect(order.filter((l) => !layers.has(l))).toEqual([]);
  });

  it('has no upward import', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(IMPORT)) {
        const spec = (m[1] ?? m[2]) as string;
        const target = path.join(path.dirname(file), spec);
        const to = layerOf(target);
        if (to !== from && (rank.get(to) ?? -1) > (rank.get(from) ?? -1)) upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('sees the imports it checks (the walk is not vacuous)', () => {
    const text = readFileSync('src/event-store/query-plan.ts', 'utf8');
    expect([...text.matchAll(IMPORT)].length).toBeGreaterThan(0);
  });
});
