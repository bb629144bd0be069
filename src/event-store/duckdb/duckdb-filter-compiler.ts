/**
 * The filter compiler's DuckDB dialect (sql/filter-compiler.ts owns the rules):
 * - extra fields: `map_extract_value(fields, key)`, the value as VARCHAR, NULL when the key
 *   is absent (DuckDB 1.5; `element_at` returns a list); a field the store keeps in a
 *   column of its own (field-columns.ts) is that column, or the map for events stored
 *   before the column was;
 * - numbers in text: `TRY_CAST(x AS DOUBLE)` (which also reads `NaN`, ` 42`, `1e400`,
 *   hence the compiler's pattern and `isfinite`);
 * - contains: `contains(lower(x), needle)`. DuckDB's `lower()` equals `toLowerCase()` on
 *   every code point except U+0130 (JavaScript gives "i̇", two code points; handled by a
 *   `replace` on the rare rows holding it), capital sigma (JavaScript's final-sigma rule)
 *   and capitals newer than DuckDB's Unicode tables (LOWER_MISMATCH); a needle that could
 *   meet one of the latter two is tested by a registered JavaScript function instead;
 * - IPv6 cidr: a registered JavaScript function running the evaluator's own `isIP` +
 *   `BlockList` test.
 *
 * The JavaScript functions must be registered once per DuckDB instance
 * (`registerFilterFunctions`) before a compiled filter runs.
 */
import { BlockList, isIP } from 'node:net';
import type { DuckDBConnection, DuckDBDataChunk, DuckDBVector } from '@duckdb/node-api';
import { parseCidr } from '../../filter/ast.js';
import { createFilterCompiler, type FilterDialect } from '../sql/filter-compiler.js';
import { quoteIdent } from '../sql/sql-params.js';
import { BLOB, BOOLEAN, DuckDBBlobVector, DuckDBScalarFunction } from './duckdb-api.js';

/** Names of the JavaScript scalar functions compiled filters call. */
export const FILTER_FUNCTIONS = Object.freeze({
  cidr: 'logscope_cidr_match',
  icontains: 'logscope_icontains',
});

/**
 * Lower-case letters that JavaScript's `toLowerCase()` produces and DuckDB's `lower()`
 * does not (capital sigma's final form, and capitals added in Unicode 16): a
 * `contains` needle holding one is tested in JavaScript. A test recomputes this from
 * both engines, so an upgrade of either that changes it fails loudly.
 */
export const LOWER_MISMATCH =
  /[\u03c2\u03c3\u019b\u0264\u1c8a\ua7cd\ua7cf\ua7d3\ua7d5\ua7db\u{10d70}-\u{10d85}\u{16ebb}-\u{16ed3}]/u;

/**
 * How a lowered needle is tested on text: `js`, the registered JavaScript function
 * (`toLowerCase().includes`); `lower`, DuckDB's `contains(lower(x), needle)` (with U+0130
 * replaced first when the needle holds i or U+0307). The word index (word-index.ts)
 * follows the same choice.
 */
export function containsMode(needle: string): 'js' | 'lower' {
  return LOWER_MISMATCH.test(needle) ? 'js' : 'lower';
}

export const duckDbFilterDialect: FilterDialect = {
  true: 'true',
  false: 'false',
  standardNullLogic: true,
  textRelation: (x, op, v) => `${x} ${op} ${v}`,
  extraField(field, params) {
    const inMap = `map_extract_value(fields, ${params.add(field)})`;
    const column = params.columnOf(field);
    return column === undefined ? inMap : `coalesce(${quoteIdent(column)}, ${inMap})`;
  },
  integerText: (x) => `CAST(${x} AS VARCHAR)`,
  double: (p) => `CAST(${p} AS DOUBLE)`,
  tryDouble: (x) => `TRY_CAST(${x} AS DOUBLE)`,
  isFinite: (x) => `isfinite(${x})`,
  fullMatch: (x, re) => `regexp_full_match(${x}, ${re})`,
  search: (x, re) => `regexp_matches(${x}, ${re})`,
  startsWith: (x, p) => `starts_with(${x}, ${p})`,
  endsWith: (x, p) => `ends_with(${x}, ${p})`,
  contains: (x, p) => `contains(${x}, ${p})`,
  containsLowered(s, needle, params) {
    if (containsMode(needle) === 'js') {
      return `${FILTER_FUNCTIONS.icontains}(encode(${s}), encode(${params.add(needle)}))`;
    }
    const n = params.add(needle);
    // JavaScript lowers U+0130 to "i" + U+0307; only a needle holding either can tell.
    if (!needle.includes('i') && !needle.includes('\u0307')) return `contains(lower(${s}), ${n})`;
    const dotted = params.add('\u0130');
    return `CASE WHEN contains(${s}, ${dotted}) THEN contains(lower(replace(${s}, ${dotted}, ${params.add('i\u0307')})), ${n}) ELSE contains(lower(${s}), ${n}) END`;
  },
  ipv6InBlock: (x, _block, blockText, params) =>
    `${FILTER_FUNCTIONS.cidr}(encode(${x}), encode(${params.add(blockText)}))`,
};

export const { compileFilter, numericTextSql } = createFilterCompiler(duckDbFilterDialect);

// ---------------------------------------------------------------------------------------
// JavaScript functions

/** The evaluator's cidr test (filter/evaluate.ts cidrMatcher), block by block. */
const blockLists = new Map<string, BlockList | null>();

function blockListFor(value: string): BlockList | null {
  let list = blockLists.get(value);
  if (list === undefined) {
    const block = parseCidr(value);
    list = null;
    if (block !== undefined) {
      list = new BlockList();
      list.addSubnet(block.address, block.prefix, block.family === 4 ? 'ipv4' : 'ipv6');
    }
    // Filters reuse a handful of blocks; the bound only stops unbounded growth.
    if (blockLists.size >= 256) blockLists.clear();
    blockLists.set(value, list);
  }
  return list;
}

function cidrContains(block: string, address: string): boolean {
  const list = blockListFor(block);
  const family = isIP(address);
  if (list === null || family === 0) return false;
  try {
    return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  } catch {
    return false;
  }
}

// The default TextDecoder drops a leading U+FEFF, which is part of the value here.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

function blobText(vector: DuckDBVector, row: number): string | null {
  if (!(vector instanceof DuckDBBlobVector)) throw new Error('expected a BLOB argument');
  const bytes = vector.getItemBytes(row);
  return bytes === null ? null : utf8.decode(bytes);
}

/**
 * A (BLOB, BLOB) -> BOOLEAN function over UTF-8 text. The arguments are BLOBs (SQL
 * `encode(x)`) because node-api decodes VARCHAR with a decoder that drops a leading
 * U+FEFF.
 */
function textPredicate(name: string, test: (a: string, b: string) => boolean): DuckDBScalarFunction {
  return DuckDBScalarFunction.create({
    name,
    returnType: BOOLEAN,
    parameterTypes: [BLOB, BLOB],
    mainFunction: (_info, input: DuckDBDataChunk, output) => {
      const a = input.getColumnVector(0);
      const b = input.getColumnVector(1);
      for (let row = 0; row < input.rowCount; row++) {
        const x = blobText(a, row);
        const y = blobText(b, row);
        output.setItem(row, x === null || y === null ? null : test(x, y));
      }
      output.flush();
    },
  });
}

/**
 * Registers the JavaScript functions compiled filters call. DuckDB keeps them in the
 * instance's catalog, so once per instance (on any of its connections) is enough, before
 * the first query; registering again is harmless.
 */
export function registerFilterFunctions(connection: DuckDBConnection): void {
  connection.registerScalarFunction(
    textPredicate(FILTER_FUNCTIONS.cidr, (address, block) => cidrContains(block, address)),
  );
  connection.registerScalarFunction(
    textPredicate(FILTER_FUNCTIONS.icontains, (haystack, needle) => haystack.toLowerCase().includes(needle)),
  );
}
