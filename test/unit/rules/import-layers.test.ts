import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The import rules of docs/architecture.md, read from its tables: the layer order between
 * the folders of `src/`, and inside `src/features/` the roles of a feature's files, the
 * doors through which another feature is reached and no cycle. Type-only imports count
 * too: they are dependencies all the same, only erased at run time.
 */

interface Import {
  /** The importing file and the imported one, as paths under the same root as the walk's. */
  from: string;
  to: string;
  /** `import type …` / `export type … from`: nothing of `to` runs for it. */
  typeOnly: boolean;
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:[^;'"]*?\sfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(p);
    return /\.ts$/.test(d.name) ? [p] : [];
  });
}

/** Every relative import of every `.ts` file under `src`, the `.js` of a specifier read as its `.ts`. */
function importsUnder(src: string): Import[] {
  return sourceFiles(src).flatMap((from) =>
    [...readFileSync(from, 'utf8').matchAll(IMPORT)].map((m) => ({
      from,
      to: path.join(path.dirname(from), (m[2] ?? m[3]) as string).replace(/\.js$/, '.ts'),
      typeOnly: m[1] !== undefined,
    })),
  );
}

/** The rows of the table between `<!-- name:begin -->` and `<!-- name:end -->`, as cells. */
function tableRows(doc: string, name: string): string[][] {
  const begin = doc.indexOf(`<!-- ${name}:begin -->`);
  const end = doc.indexOf(`<!-- ${name}:end -->`);
  if (begin < 0 || end < begin) throw new Error(`docs/architecture.md has no table ${name}`);
  return doc
    .slice(begin, end)
    .split('\n')
    .filter((line) => line.startsWith('|') && !line.startsWith('|---'))
    .slice(1)
    .map((line) => line.split('|').slice(1, -1));
}

const codeIn = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
const globRegex = (glob: string) => new RegExp(`^${glob.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);

// ---------------------------------------------------------------------------------------
// Between the folders of src/

/** `src/<layer>/…` or a top-level file of `src/` (its own layer). */
const layerOf = (src: string, file: string) => path.relative(src, file).split(path.sep)[0] ?? '';

function upwardImports(src: string, order: readonly string[]): string[] {
  const rank = new Map(order.map((layer, i) => [layer, i]));
  return importsUnder(src)
    .filter(({ from, to }) => {
      const [a, b] = [layerOf(src, from), layerOf(src, to)];
      return a !== b && (rank.get(b) ?? -1) > (rank.get(a) ?? -1);
    })
    .map(({ from, to }) => `${from} -> ${to}`);
}

// ---------------------------------------------------------------------------------------
// Inside src/features/

interface FeatureRules {
  /** Each role's file-name patterns; the default role takes a file no pattern names. */
  roles: { name: string; patterns: RegExp[]; imports: Set<string> }[];
  defaultRole: string;
  /** Another feature's files that may be imported, and whether only for types. */
  doors: { pattern: RegExp; typesOnly: boolean }[];
}

function featureRules(doc: string): FeatureRules {
  const roles = tableRows(doc, 'feature-roles').map(([role = '', files = '', imports = '']) => ({
    name: codeIn(role)[0] as string,
    patterns: codeIn(files).map(globRegex),
    imports: new Set(codeIn(imports)),
    isDefault: /no other row/.test(files),
  }));
  const doors = tableRows(doc, 'feature-doors').map(([file = '', what = '']) => ({
    pattern: globRegex(codeIn(file)[0] as string),
    typesOnly: /types only/.test(what),
  }));
  const defaults = roles.filter((r) => r.isDefault);
  if (defaults.length !== 1) throw new Error('the feature-roles table needs one row for "no other row"');
  return { roles, defaultRole: defaults[0]?.name as string, doors };
}

/**
 * Where a file stands: the feature it belongs to (null for a file of `src/` outside every
 * feature folder, the composition root's own files included) and its role in it.
 */
function placeOf(src: string, file: string, rules: FeatureRules): { feature: string | null; role: string } {
  const parts = path.relative(src, file).split(path.sep);
  if (parts[0] !== 'features' || parts.length < 3) return { feature: null, role: '' };
  const name = parts.at(-1) as string;
  const role = rules.roles.find((r) => r.patterns.some((p) => p.test(name)))?.name ?? rules.defaultRole;
  return { feature: parts[1] as string, role };
}

/** A feature's file imports of the composition root's own files (src/features/*.ts) only these. */
const ROOT_FILES_A_FEATURE_IMPORTS = ['component.ts'];

/**
 * Imports that break the rules, each as `from -> to (why)`: `within` a feature, a role
 * importing one its row does not name (or a root file other than the contract); `between`,
 * a file of another feature or layer coming in by no door.
 */
function featureViolations(src: string, rules: FeatureRules): { within: string[]; between: string[] } {
  const roleImports = new Map(rules.roles.map((r) => [r.name, r.imports]));
  const found = { within: [] as string[], between: [] as string[] };
  for (const edge of importsUnder(src)) {
    const from = placeOf(src, edge.from, rules);
    const to = placeOf(src, edge.to, rules);
    const report = (list: string[], why: string) => list.push(`${edge.from} -> ${edge.to} (${why})`);
    if (from.feature !== null && to.feature === null && layerOf(src, edge.to) === 'features') {
      const rootFile = path.relative(path.join(src, 'features'), edge.to);
      if (!ROOT_FILES_A_FEATURE_IMPORTS.includes(rootFile))
        report(found.within, 'a feature imports of the root only its contract');
    } else if (to.feature === null) {
      // Not a feature's file: the layer rule judges it.
    } else if (from.feature === to.feature) {
      if (!roleImports.get(from.role)?.has(to.role)) report(found.within, `${from.role} imports ${to.role}`);
    } else {
      const door = rules.doors.find((d) => d.pattern.test(path.basename(edge.to)));
      if (door === undefined) report(found.between, `not a door of ${to.feature}`);
      else if (door.typesOnly && !edge.typeOnly)
        report(found.between, `only types of ${path.basename(edge.to)}`);
    }
  }
  return found;
}

/** The cycles of a graph, each once, as the path that closes it (`a -> b -> a`). */
function cyclesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const cycles = new Set<string>();
  const done = new Set<string>();
  const visit = (node: string, trail: string[]) => {
    const at = trail.indexOf(node);
    if (at >= 0) {
      // Written from its smallest node, so each cycle is reported once.
      const loop = trail.slice(at);
      const start = loop.indexOf([...loop].sort()[0] as string);
      const turned = [...loop.slice(start), ...loop.slice(0, start)];
      cycles.add([...turned, turned[0]].join(' -> '));
      return;
    }
    if (done.has(node)) return;
    for (const next of graph.get(node) ?? []) visit(next, [...trail, node]);
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) visit(node, []);
  return [...cycles].sort();
}

function graphOf(edges: Iterable<[string, string]>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [a, b] of edges) if (a !== b) graph.set(a, (graph.get(a) ?? new Set()).add(b));
  return graph;
}

/** Features that import themselves through other features. */
function featureCycles(src: string, rules: FeatureRules): string[] {
  const pairs = importsUnder(src).map(
    ({ from, to }) => [placeOf(src, from, rules).feature, placeOf(src, to, rules).feature] as const,
  );
  return cyclesOf(
    graphOf(pairs.filter((p): p is [string, string] => p[0] !== null && p[1] !== null && p[0] !== p[1])),
  );
}

/** Files of src/features that import themselves through other files. */
function fileCycles(src: string): string[] {
  const inFeatures = (file: string) => layerOf(src, file) === 'features';
  const edges = importsUnder(src).filter(({ from, to }) => inFeatures(from) && inFeatures(to));
  return cyclesOf(graphOf(edges.map(({ from, to }) => [from, to])));
}

// ---------------------------------------------------------------------------------------

const DOC = readFileSync('docs/architecture.md', 'utf8');

function layerOrder(doc: string): string[] {
  return tableRows(doc, 'layers').map(([layer = '']) => codeIn(layer)[0] as string);
}

describe('import layers', () => {
  const order = layerOrder(DOC);

  it('names every folder and top-level file of src/ in docs/architecture.md', () => {
    const layers = new Set(sourceFiles('src').map((f) => layerOf('src', f)));
    expect([...layers].filter((l) => !order.includes(l)).sort()).toEqual([]);
    expect(order.filter((l) => !layers.has(l))).toEqual([]);
  });

  it('has no upward import', () => {
    expect(upwardImports('src', order)).toEqual([]);
  });

  it('sees the imports it checks (the walk is not vacuous)', () => {
    const imports = importsUnder('src');
    expect(new Set(imports.map((i) => i.from)).size).toBeGreaterThan(sourceFiles('src').length / 2);
    expect(imports.some((i) => i.typeOnly)).toBe(true);
    expect(imports.some((i) => !i.typeOnly)).toBe(true);
  });
});

describe('imports inside src/features', () => {
  const rules = featureRules(DOC);

  it('reads a role for each file name and the doors between features from docs/architecture.md', () => {
    expect(rules.roles.map((r) => r.name).sort()).toEqual(
      ['index', 'repository', 'routes', 'schema', 'service', 'table'].sort(),
    );
    const named = new Set(rules.roles.map((r) => r.name));
    for (const r of rules.roles) expect([...r.imports].filter((i) => !named.has(i))).toEqual([]);
    expect(rules.doors.map((d) => d.typesOnly).sort()).toEqual([false, false, true]);
  });

  it('sees files of every role and imports between features (the walk is not vacuous)', () => {
    const places = importsUnder('src').map((i) => [
      placeOf('src', i.from, rules),
      placeOf('src', i.to, rules),
    ]);
    const roles = new Set(
      places.flatMap((pair) => pair.filter((p) => p.feature !== null).map((p) => p.role)),
    );
    expect([...roles].sort()).toEqual(rules.roles.map((r) => r.name).sort());
    expect(places.some(([a, b]) => a?.feature && b?.feature && a.feature !== b.feature)).toBe(true);
  });

  it('imports within a feature only downward: routes → service → repository → table', () => {
    expect(featureViolations('src', rules).within).toEqual([]);
  });

  it('reaches another feature only through its doors', () => {
    expect(featureViolations('src', rules).between).toEqual([]);
  });

  it('has no cycle between features', () => {
    expect(featureCycles('src', rules)).toEqual([]);
  });

  it('has no cycle between the files of src/features', () => {
    expect(fileCycles('src')).toEqual([]);
  });
});

describe('the import rules on a planted tree', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'import-rules-'));
  const src = path.join(root, 'src');
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const plant = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
    writeFileSync(path.join(src, file), text);
  };
  plant('core/time.ts', "import { component } from '../features/component.js';\n");
  plant('cli/user.ts', "import { ARow } from '../features/a/a-table.js';\n");
  plant('features/component.ts', 'export const component = 1;\n');
  plant('features/root.ts', 'export const root = 1;\n');
  plant('features/a/index.ts', "import { b } from '../b/index.js';\nimport { root } from '../root.js';\n");
  plant('features/a/a-repository.ts', "import { AService } from './a-service.js';\n");
  plant('features/a/a-service.ts', "import { BService } from '../b/b-service.js';\nimport './x.js';\n");
  plant('features/a/a-schema.ts', 'export const ASchema = 1;\n');
  plant('features/a/a-table.ts', 'export type ARow = 1;\n');
  plant('features/a/x.ts', "import type { Y } from './y.js';\n");
  plant('features/a/y.ts', "export type { X } from './x.js';\n");
  plant('features/b/index.ts', "import { component } from '../component.js';\n");
  plant(
    'features/b/b-service.ts',
    "import type { A } from '../a/index.js';\nimport { ASchema } from '../a/a-schema.js';\n",
  );
  plant(
    'features/b/b-routes.ts',
    "import type { ARow } from '../a/a-table.js';\nimport type { B } from './b-service.js';\n",
  );
  const rules = featureRules(DOC);

  it('reports an import of a layer listed later', () => {
    expect(upwardImports(src, ['core', 'features', 'cli'])).toEqual([
      `${path.join(src, 'core/time.ts')} -> ${path.join(src, 'features/component.ts')}`,
    ]);
  });

  it('reports an upward import in a feature, a root file other than the contract and imports by no door', () => {
    const at = (file: string) => path.join(src, 'features', file);
    const { within, between } = featureViolations(src, rules);
    expect(within.sort()).toEqual([
      `${at('a/a-repository.ts')} -> ${at('a/a-service.ts')} (repository imports service)`,
      `${at('a/index.ts')} -> ${at('root.ts')} (a feature imports of the root only its contract)`,
    ]);
    expect(between.sort()).toEqual([
      `${path.join(src, 'cli/user.ts')} -> ${at('a/a-table.ts')} (not a door of a)`,
      `${at('a/a-service.ts')} -> ${at('b/b-service.ts')} (only types of b-service.ts)`,
      `${at('b/b-routes.ts')} -> ${at('a/a-table.ts')} (not a door of a)`,
    ]);
  });

  it('reports a cycle between features and one between files, type-only imports included', () => {
    expect(featureCycles(src, rules)).toEqual(['a -> b -> a']);
    const at = (file: string) => path.join(src, 'features/a', file);
    expect(fileCycles(src)).toEqual([`${at('x.ts')} -> ${at('y.ts')} -> ${at('x.ts')}`]);
  });
});
