import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A file of the server's or the web UI's code stays short enough to read whole: past this,
 * it holds more than one thing, and its section comments are where it splits.
 */
const MAX_LINES = 500;

/** The folders whose code the rule holds. */
const ROOTS = ['src', 'ui/src'];

/** The kinds of file it holds: code and style sheets. */
const CODE = /\.(ts|tsx|js|css)$/;

/**
 * Files a tool writes, never read or edited by hand, each named `*.generated.*`: the
 * query-language parser Peggy writes from `src/syntax/grammar.ts` (`npm run gen:parser`),
 * and the web UI's API types openapi-typescript writes from the served OpenAPI document
 * (`npm run gen:api-types`). The parser's declarations (`query-parser.generated.d.ts`) are
 * short and need no entry.
 */
const GENERATED = ['src/syntax/query-parser.generated.js', 'ui/src/api-types.generated.ts'];

function codeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return codeFiles(p);
    return CODE.test(d.name) ? [p] : [];
  });
}

/** Lines as an editor numbers them: a last line's newline starts no line of its own. */
function lineCount(file: string): number {
  const text = readFileSync(file, 'utf8');
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** The files under `roots` (paths relative to `base`) longer than MAX_LINES and not allowed, with their lengths. */
function oversized(base: string, roots: readonly string[], allowed: readonly string[]): string[] {
  return roots
    .flatMap((root) => codeFiles(path.join(base, root)))
    .map((file) => ({ file: path.relative(base, file).split(path.sep).join('/'), lines: lineCount(file) }))
    .filter(({ file, lines }) => lines > MAX_LINES && !allowed.includes(file))
    .map(({ file, lines }) => `${file}: ${lines} lines`)
    .sort();
}

describe('file sizes', () => {
  it(`keeps every file of ${ROOTS.join(' and ')} to ${MAX_LINES} lines, generated files aside`, () => {
    expect(oversized('.', ROOTS, GENERATED)).toEqual([]);
  });

  it('allows only generated files, each of them present', () => {
    for (const file of GENERATED) {
      expect(file).toMatch(/\.generated\.[a-z.]+$/);
      expect(() => readFileSync(file)).not.toThrow();
    }
  });

  it('sees the files it checks (the walk is not vacuous)', () => {
    const files = ROOTS.flatMap(codeFiles);
    for (const ext of ['.ts', '.tsx', '.css']) expect(files.some((f) => f.endsWith(ext))).toBe(true);
    expect(files).toContain(path.join('src', 'main.ts'));
  });
});

describe('the file-size rule on a planted tree', () => {
  const base = mkdtempSync(path.join(tmpdir(), 'file-size-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  const plant = (file: string, lines: number, last = '\n') => {
    mkdirSync(path.dirname(path.join(base, file)), { recursive: true });
    writeFileSync(
      path.join(base, file),
      `${Array.from({ length: lines }, (_, i) => `// ${i}`).join('\n')}${last}`,
    );
  };
  plant('src/deep/er/long.ts', 501);
  plant('src/at-limit.ts', 500);
  plant('src/no-last-newline.tsx', 501, '');
  plant('ui/src/styles.css', 900);
  plant('src/notes.md', 900);
  plant('src/parser.generated.js', 5000);
  plant('src/other.generated.js', 600);

  it('reports a file one line over, in any folder of either root, and a generated file not allowed', () => {
    expect(oversized(base, ROOTS, ['src/parser.generated.js'])).toEqual([
      'src/deep/er/long.ts: 501 lines',
      'src/no-last-newline.tsx: 501 lines',
      'src/other.generated.js: 600 lines',
      'ui/src/styles.css: 900 lines',
    ]);
  });
});
