import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The contributor's checklists (docs/extending.md) and CONTRIBUTING.md name the files to
 * touch, the scripts to run and the migrations to follow: a path that moved, a script
 * renamed or a migration name made up leads a new contributor astray (issue 74's drill).
 * Every repository path they name in backticks (`src/…`, `test/…`, `ui/…`, `docs/…`,
 * `scripts/…`, `bench/…`) exists; a path with a placeholder (`src/features/<feature>/`,
 * `src/features/*.ts`) exists up to its last folder before the placeholder. Every
 * `npm run <script>` is a script of package.json, and every migration name in backticks
 * is one of test/metadata/migration-names.test.ts.
 */
const DOCS = ['docs/extending.md', 'CONTRIBUTING.md'];

const ROOTS = /^(?:src|test|ui|docs|scripts|bench)\//;
/** Where a path stops being literal: a placeholder, a glob, an ellipsis. */
const PLACEHOLDER = /[<*{…]/;

interface Known {
  exists(path: string): boolean;
  scripts: ReadonlySet<string>;
  migrations: ReadonlySet<string>;
}

/** The words of each `code span` outside fenced blocks, stripped of the punctuation around them. */
function codeWords(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/`([^`]+)`/g)].flatMap((m) =>
    (m[1] as string)
      .split(/\s+/)
      .map((w) => w.replace(/^[('"[]+|[)'",;:.\]]+$/g, ''))
      .filter(Boolean),
  );
}

/** The paths, scripts and migrations a text names that are not what it says, each with why. */
function problems(text: string, known: Known): string[] {
  const found: string[] = [];
  for (const word of codeWords(text)) {
    if (ROOTS.test(word)) {
      const path = word.split('#')[0] as string;
      const at = path.search(PLACEHOLDER);
      const literal = at < 0 ? path : path.slice(0, path.lastIndexOf('/', at) + 1);
      if (!known.exists(literal)) found.push(`${word}: no such file or folder`);
    } else if (/^\d{4}-[a-z][a-z0-9-]*$/.test(word) && !known.migrations.has(word))
      found.push(`${word}: no such migration`);
  }
  for (const m of text.matchAll(/npm run ([\w:.-]+)/g))
    if (!known.scripts.has(m[1] as string)) found.push(`npm run ${m[1]}: no such script`);
  return found;
}

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
const REPOSITORY: Known = {
  exists: (path) => existsSync(path),
  scripts: new Set(Object.keys(pkg.scripts)),
  migrations: new Set(
    [...readFileSync('test/metadata/migration-names.test.ts', 'utf8').matchAll(/'(\d{4}-[a-z0-9-]+)'/g)].map(
      (m) => m[1] as string,
    ),
  ),
};

describe('the contributor docs name what exists', () => {
  it.each(DOCS)('%s: every path, script and migration it names', (doc) => {
    expect(problems(readFileSync(doc, 'utf8'), REPOSITORY)).toEqual([]);
  });

  it('checks what the checklists name (the walk is not vacuous)', () => {
    const text = readFileSync('docs/extending.md', 'utf8');
    expect(codeWords(text).filter((w) => ROOTS.test(w)).length).toBeGreaterThan(50);
    expect([...text.matchAll(/npm run ([\w:.-]+)/g)].length).toBeGreaterThanOrEqual(3);
    expect(REPOSITORY.migrations.size).toBeGreaterThan(20);
  });

  it('reports a planted wrong path, script and migration, and takes placeholders', () => {
    const planted = [
      'Touch `src/pipes/pipe-table.ts` and `src/features/<feature>/<x>-routes.ts`, run `npm run gen:parser`.',
      'Then `src/pipes/no-such-file.ts`, `test/nowhere/<kind>/x.test.ts` (`npm run gen:nothing`),',
      "`migrations: { '0027-channel-kinds-unchecked': … }` after `0099-made-up`.",
    ].join('\n');
    expect(problems(planted, REPOSITORY)).toEqual([
      'src/pipes/no-such-file.ts: no such file or folder',
      'test/nowhere/<kind>/x.test.ts: no such file or folder',
      '0099-made-up: no such migration',
      'npm run gen:nothing: no such script',
    ]);
  });
});
