/**
 * The one filter compiler: turns the filter AST (filter/ast.ts) into a SQL boolean
 * expression over the `events` table that selects exactly the events the JavaScript
 * evaluator (filter/evaluate.ts, whose header defines the semantics) accepts. It
 * owns the rules; a store's `FilterDialect` spells the few expressions its engine writes
 * its own way (ADR 0006). Every value is a bound parameter; the SQL text holds only
 * quoted column names, placeholders, keywords and function names.
 *
 * How the evaluator's rules map to SQL:
 * - Two-valued logic: every condition is TRUE or FALSE, never NULL, so `NOT` is plain
 *   negation and each negated operator is `NOT` of its positive one. A comparison on a
 *   nullable column gets `(col IS NOT NULL AND <test>)` (both parts stay table filters,
 *   so zone maps still prune); a text test (contains, regex...), a map field or a test
 *   that can itself be NULL gets `coalesce(<test>, false)`; NOT NULL columns (ts, ...)
 *   are compared bare.
 * - Map fields: the dialect's lookup, the value as text, NULL when the key is absent.
 * - Integer columns: the value goes through `parseNumeric`; the condition becomes an
 *   interval of integers clamped to the column's stored type (a non-integer `eq` is
 *   FALSE, `gt 2.5` is `>= 3`), so the column is compared directly against an in-range
 *   bound.
 * - Time columns: the value goes through `toTimeMs` and is bound as a time (the driver
 *   binds values beyond its engine's range as ±infinity), so `ts` is compared directly
 *   and keeps its zone-map pruning.
 * - String, ip and map fields with a number (relational operators): the field must
 *   pass `parseNumeric`, reproduced as the same regular expression (RE2 full match)
 *   plus the dialect's checked cast to a double.
 * - Severity: every condition first goes through `lowerCond` (filter/ast.ts), which
 *   turns relations on `severity` into `in` lists of names (rank order) and canonicalises
 *   equality values, so the column is compared as plain text.
 * - contains / text: the needle is lower-cased here by JavaScript; the dialect tests it
 *   against the lower-cased text, exactly as `toLowerCase()` would lower it.
 * - cidr: strings without `:` can only be IPv4, tested by a regular expression that
 *   matches exactly the dotted quads Node's `isIP` accepts inside the block; strings
 *   with `:` (IPv6, IPv4-mapped, zone ids) by the dialect, as `isIP` + `BlockList` would.
 *
 * Known differences, all outside what ingest produces:
 * - text operators on `bytes` beyond ±2^53: SQL prints the exact integer, JavaScript
 *   the shortest round-trip form of the double (2^60 is "1152921504606847000").
 * - regex: the engine runs RE2; the evaluator runs a JavaScript translation (see
 *   filter/regex.ts), which differs on e.g. `.` against \r, \u2028 and \u2029,
 *   Unicode `\s`, and scoped flag groups. A pattern RE2 rejects is a query error here,
 *   not "no match" (validation refuses such patterns before they reach an AST).
 */
import {
  COLUMN_KINDS,
  EVENT_SCHEMA,
  type EventColumn,
  type FieldKind,
  type StoredColumn,
} from '../../core/event.js';
import {
  type Cidr,
  type CondNode,
  type FilterNode,
  lowerCond,
  parseCidr,
  parseNumeric,
  type RangeValue,
  type Scalar,
  scalarToString,
  toTimeMs,
} from '../../filter/ast.js';
import { requiredLiterals } from '../../filter/regex.js';
import { ipv4BlockPattern, ipv4Part } from './cidr-sql.js';
import { quoteIdent, type SqlParams, sqlTime } from './sql-params.js';

/**
 * What a store's engine spells its own way. Arguments are SQL expressions; `…Param`
 * arguments are placeholders of bound text values.
 */
export interface FilterDialect {
  /** The boolean constants (ClickHouse 18.16 has no `true`/`false`). */
  readonly true: string;
  readonly false: string;
  /**
   * Whether `NULL AND false` is false, as standard SQL says (DuckDB). ClickHouse 18.16
   * gives NULL for any NULL operand, so there every test on a nullable column is
   * `coalesce(<test>, 0)` instead of `(col IS NOT NULL AND <test>)`.
   */
  readonly standardNullLogic: boolean;
  /** Text `x` against `v` by code point (compareCodePoints): bytewise in UTF-8. */
  textRelation(x: string, op: TextOp, v: string): string;
  /**
   * The extra field `field` as text, NULL when the event lacks it: its entry in the
   * `fields` map, or where `params.columnOf` says the store keeps it.
   */
  extraField(field: string, params: SqlParams): string;
  /** An integer expression as decimal text. */
  integerText(x: string): string;
  /** A bound number (or the decimal text of a large integer) as a double. */
  double(param: string): string;
  /** Text as a double, NULL where the engine cannot read one. */
  tryDouble(x: string): string;
  /** A double that is neither infinite nor NaN. */
  isFinite(x: string): string;
  /** The whole text matches the RE2 pattern. */
  fullMatch(x: string, patternParam: string): string;
  /** The RE2 pattern matches somewhere in the text. */
  search(x: string, patternParam: string): string;
  startsWith(x: string, param: string): string;
  endsWith(x: string, param: string): string;
  /** Case-sensitive substring. */
  contains(x: string, param: string): string;
  /** `x.toLowerCase().includes(needle)`, exactly, for a needle JavaScript has lowered. */
  containsLowered(x: string, needle: string, params: SqlParams): string;
  /** Text holding a colon (IPv6, IPv4-mapped) inside `block`, as `isIP` + `BlockList` decide. */
  ipv6InBlock(x: string, block: Cidr, blockText: string, params: SqlParams): string;
}

export interface FilterCompiler {
  /**
   * A boolean expression over `events` selecting exactly the events `compilePredicate(ast)`
   * accepts; its values are appended to `params`. Never NULL.
   */
  compileFilter(ast: FilterNode, params: SqlParams): string;
  /** A text value (SQL `x`) as the double `parseNumeric` reads from it, NULL when it reads none. */
  numericTextSql(x: string, params: SqlParams): string;
}

/** Exactly the strings `parseNumeric` reads (filter/ast.ts NUMERIC), in RE2 syntax. */
const NUMERIC_RE2 = '[+-]?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?';

const INT_RANGE = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
} as const;

/** The queryable columns of the schema by name. */
const COLUMNS: ReadonlyMap<string, StoredColumn> = new Map(
  EVENT_SCHEMA.filter((c) => Object.hasOwn(COLUMN_KINDS, c.name)).map((c) => [c.name, c]),
);

interface Field {
  /** The value as SQL: a quoted column or a map lookup. */
  readonly sql: string;
  readonly kind: FieldKind;
  readonly column: StoredColumn | undefined;
}

const exists = (f: Field): string => `(${f.sql} IS NOT NULL)`;

function intParam(n: bigint, params: SqlParams): string {
  return params.add(
    n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n,
  );
}

/** Unix ms as a time value (the driver binds it as a TIMESTAMP, ±infinity beyond its range). */
function timestampParam(ms: number, params: SqlParams): string {
  if (Number.isNaN(ms)) throw new Error('toTimeMs returned NaN');
  return params.add(sqlTime(ms));
}

// ---------------------------------------------------------------------------------------
// Integer columns: every condition is an interval of integers.

type Relation = 'eq' | 'gt' | 'gte' | 'lt' | 'lte';

/** Integers n (as bounds, undefined = unbounded) with `n <relation> t`; undefined when none. */
function integerBounds(relation: Relation, t: number): [bigint | undefined, bigint | undefined] | undefined {
  switch (relation) {
    case 'eq':
      return Number.isInteger(t) ? [BigInt(t), BigInt(t)] : undefined;
    case 'gt':
      return [BigInt(Math.floor(t)) + 1n, undefined];
    case 'gte':
      return [BigInt(Math.ceil(t)), undefined];
    case 'lt':
      return [undefined, BigInt(Math.ceil(t)) - 1n];
    case 'lte':
      return [undefined, BigInt(Math.floor(t))];
    default:
      return relation satisfies never;
  }
}

// ---------------------------------------------------------------------------------------
// Operators

type TextOp = '<' | '<=' | '>' | '>=';
const SQL_RELATION: Record<Exclude<Relation, 'eq'>, TextOp> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

const negate = (sql: string): string => `(NOT ${sql})`;

// ---------------------------------------------------------------------------------------
// What goes through the dialect

/** The compiler for one dialect: the rules above, with `d` spelling the engine's expressions. */
export function createFilterCompiler(d: FilterDialect): FilterCompiler {
  const FALSE = d.false;

  /**
   * `test` (a boolean over the field's value) made two-valued: FALSE when the field is
   * missing. `nullable` says the test itself can be NULL on a present value.
   */
  function present(f: Field, test: string, nullable = false): string {
    if (f.column?.notNull && !nullable) return test;
    if (f.column === undefined || nullable || !d.standardNullLogic) return `coalesce(${test}, ${FALSE})`;
    return `(${f.sql} IS NOT NULL AND ${test})`;
  }

  function integerInterval(
    f: Field,
    lo: bigint | undefined,
    hi: bigint | undefined,
    params: SqlParams,
  ): string {
    const type = f.column?.type;
    if (type !== 'int32' && type !== 'int64') throw new Error(`${f.sql} is not an integer column`);
    const [min, max] = INT_RANGE[type];
    const l = lo === undefined || lo < min ? min : lo;
    const h = hi === undefined || hi > max ? max : hi;
    if (l > h) return FALSE;
    if (l === min && h === max) return exists(f);
    if (l === h) return present(f, `${f.sql} = ${intParam(l, params)}`);
    if (l === min) return present(f, `${f.sql} <= ${intParam(h, params)}`);
    if (h === max) return present(f, `${f.sql} >= ${intParam(l, params)}`);
    return present(f, `${f.sql} BETWEEN ${intParam(l, params)} AND ${intParam(h, params)}`);
  }

  function equals(f: Field, value: Scalar, params: SqlParams): string {
    switch (f.kind) {
      case 'integer': {
        const t = parseNumeric(value);
        const bounds = t === undefined ? undefined : integerBounds('eq', t);
        return bounds === undefined ? FALSE : integerInterval(f, bounds[0], bounds[1], params);
      }
      case 'time': {
        const t = toTimeMs(value);
        return t === undefined ? FALSE : present(f, `${f.sql} = ${timestampParam(t, params)}`);
      }
      case 'string':
      case 'ip':
        return present(f, `${f.sql} = ${params.add(scalarToString(value))}`);
      default:
        return f.kind satisfies never;
    }
  }

  function oneOf(f: Field, values: readonly Scalar[], params: SqlParams): string {
    const targets = new Set<string>();
    const list: string[] = [];
    // Duplicates are dropped by their meaning, not their spelling (`5` and `"5.0"`).
    const push = (key: string, sql: () => string) => {
      if (!targets.has(key)) {
        targets.add(key);
        list.push(sql());
      }
    };
    switch (f.kind) {
      case 'integer': {
        const [min, max] = INT_RANGE[f.column?.type === 'int64' ? 'int64' : 'int32'];
        for (const v of values) {
          const t = parseNumeric(v);
          if (t === undefined || !Number.isInteger(t)) continue;
          const n = BigInt(t);
          if (n >= min && n <= max) push(String(n), () => intParam(n, params));
        }
        break;
      }
      case 'time':
        for (const v of values) {
          const t = toTimeMs(v);
          if (t !== undefined) push(String(t), () => timestampParam(t, params));
        }
        break;
      case 'string':
      case 'ip':
        for (const v of values) {
          const s = scalarToString(v);
          push(s, () => params.add(s));
        }
        break;
      default:
        return f.kind satisfies never;
    }
    if (list.length === 0) return FALSE;
    if (list.length === 1) return present(f, `${f.sql} = ${list[0]}`);
    return present(f, `${f.sql} IN (${list.join(', ')})`);
  }

  function resolveField(field: string, params: SqlParams): Field {
    const column = COLUMNS.get(field);
    if (column !== undefined) {
      return { sql: quoteIdent(field), kind: COLUMN_KINDS[field as EventColumn], column };
    }
    // The key is bound on first use: a condition that compiles to a constant binds nothing,
    // and an engine may refuse more values than placeholders.
    let sql: string | undefined;
    return {
      get sql() {
        sql ??= d.extraField(field, params);
        return sql;
      },
      kind: 'string',
      column: undefined,
    };
  }

  const asText = (f: Field): string => (f.kind === 'integer' ? d.integerText(f.sql) : f.sql);

  /** A safe integer or a fraction binds exactly as a number; larger integers as text. */
  function doubleParam(n: number, params: SqlParams): string {
    const value = Number.isInteger(n) && !Number.isSafeInteger(n) ? String(n) : n;
    return d.double(params.add(value));
  }

  /**
   * A text value (SQL `x`) as the double `parseNumeric` reads from it, NULL when it reads
   * none (`NaN`, ` 42`, `0x10`, `1e400` included, which an engine's own cast may accept).
   */
  function numericTextSql(x: string, params: SqlParams): string {
    const num = d.tryDouble(x);
    return `(CASE WHEN ${d.fullMatch(x, params.add(NUMERIC_RE2))} AND ${d.isFinite(num)} THEN ${num} END)`;
  }

  /** The field's text parsed as `parseNumeric` does, compared by `test` (`x > $n`). */
  function numericText(f: Field, test: (num: string) => string, params: SqlParams): string {
    const num = d.tryDouble(f.sql);
    // A cast may give NULL for an overflowing constant but infinity for a column value.
    const numeric = `${d.fullMatch(f.sql, params.add(NUMERIC_RE2))} AND ${d.isFinite(num)}`;
    return present(f, `(${numeric} AND ${test(num)})`, true);
  }

  function relation(
    f: Field,
    rel: Exclude<Relation, 'eq'>,
    value: string | number,
    params: SqlParams,
  ): string {
    switch (f.kind) {
      case 'integer': {
        const t = parseNumeric(value);
        const bounds = t === undefined ? undefined : integerBounds(rel, t);
        return bounds === undefined ? FALSE : integerInterval(f, bounds[0], bounds[1], params);
      }
      case 'time': {
        const t = toTimeMs(value);
        return t === undefined
          ? FALSE
          : present(f, `${f.sql} ${SQL_RELATION[rel]} ${timestampParam(t, params)}`);
      }
      case 'string':
      case 'ip':
        if (typeof value === 'number') {
          return numericText(f, (num) => `${num} ${SQL_RELATION[rel]} ${doubleParam(value, params)}`, params);
        }
        return present(f, d.textRelation(f.sql, SQL_RELATION[rel], params.add(value)));
      default:
        return f.kind satisfies never;
    }
  }

  function between(f: Field, [lo, hi]: RangeValue, params: SqlParams): string {
    switch (f.kind) {
      case 'integer': {
        const l = parseNumeric(lo);
        const h = parseNumeric(hi);
        if (l === undefined || h === undefined) return FALSE;
        return integerInterval(f, integerBounds('gte', l)?.[0], integerBounds('lte', h)?.[1], params);
      }
      case 'time': {
        const l = toTimeMs(lo);
        const h = toTimeMs(hi);
        if (l === undefined || h === undefined) return FALSE;
        return present(f, `${f.sql} BETWEEN ${timestampParam(l, params)} AND ${timestampParam(h, params)}`);
      }
      case 'string':
      case 'ip': {
        if (typeof lo === 'number' && typeof hi === 'number') {
          return numericText(
            f,
            (num) => `${num} BETWEEN ${doubleParam(lo, params)} AND ${doubleParam(hi, params)}`,
            params,
          );
        }
        const [l, h] = [params.add(String(lo)), params.add(String(hi))];
        return present(f, `(${d.textRelation(f.sql, '>=', l)} AND ${d.textRelation(f.sql, '<=', h)})`);
      }
      default:
        return f.kind satisfies never;
    }
  }

  /**
   * A text test on the field's text: integer columns as decimal text, time columns FALSE.
   * Made two-valued by `coalesce`, never `(col IS NOT NULL AND <test>)`: no zone map prunes
   * by a substring or a pattern, and DuckDB ran that pair at about twice the cost of the
   * test alone (a word in 937,000 messages: 183-209 ms against 79-125; bench note
   * 2026-11-28-cold-reads.md).
   */
  function textual(f: Field, test: (text: string) => string): string {
    if (f.kind === 'time') return FALSE;
    const text = test(asText(f));
    return f.column?.notNull ? text : `coalesce(${text}, ${FALSE})`;
  }

  /**
   * An RE2 search, after the longest text every match holds (`requiredLiterals`, as
   * written: not under `(?i)`), which the engine tests first and far faster (DuckDB over
   * 40,000 events: a regex 44 ms, the same with its literal first 26).
   */
  function regexSearch(s: string, pattern: string, params: SqlParams): string {
    const found = requiredLiterals(pattern);
    const longest =
      found && !found.ignoreCase ? found.literals.reduce((a, b) => (b.length > a.length ? b : a), '') : '';
    const search = d.search(s, params.add(pattern));
    return longest.length >= 2 ? `(${d.contains(s, params.add(longest))} AND ${search})` : search;
  }

  /** Case-insensitive substring, exactly as `s.toLowerCase().includes(needle.toLowerCase())`. */
  function containsText(f: Field, value: string, params: SqlParams): string {
    const needle = value.toLowerCase();
    if (f.kind === 'integer') return textual(f, (s) => d.contains(s, params.add(needle)));
    return textual(f, (s) => d.containsLowered(s, needle, params));
  }

  function cidr(f: Field, value: string, params: SqlParams): string {
    const block = parseCidr(value);
    if (block === undefined || f.kind === 'integer' || f.kind === 'time') return FALSE;
    const v4 = ipv4Part(block);
    const dotted =
      v4 === undefined ? FALSE : d.fullMatch(f.sql, params.add(ipv4BlockPattern(v4.base, v4.prefix)));
    const colon = d.ipv6InBlock(f.sql, block, value, params);
    // Only text with a colon can be IPv6 (CASE runs THEN on those rows only).
    return present(f, `CASE WHEN ${d.contains(f.sql, params.add(':'))} THEN ${colon} ELSE ${dotted} END`);
  }

  // ---------------------------------------------------------------------------------------
  // The tree

  function compileCond(node: CondNode, params: SqlParams): string {
    const lowered = lowerCond(node);
    if (lowered !== node) return compileFilter(lowered, params);
    const f = resolveField(node.field, params);
    switch (node.op) {
      case 'exists':
        return exists(f);
      case 'not_exists':
        return negate(exists(f));
      case 'eq':
        return equals(f, node.value, params);
      case 'ne':
        return negate(equals(f, node.value, params));
      case 'in':
        return oneOf(f, node.value, params);
      case 'not_in':
        return negate(oneOf(f, node.value, params));
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return relation(f, node.op, node.value, params);
      case 'between':
        return between(f, node.value, params);
      case 'contains':
        return containsText(f, node.value, params);
      case 'not_contains':
        return negate(containsText(f, node.value, params));
      case 'startswith':
        return textual(f, (s) => d.startsWith(s, params.add(node.value)));
      case 'endswith':
        return textual(f, (s) => d.endsWith(s, params.add(node.value)));
      case 'regex':
        return textual(f, (s) => regexSearch(s, node.value, params));
      case 'cidr':
        return cidr(f, node.value, params);
      default:
        return node satisfies never;
    }
  }

  /**
   * A boolean expression over `events` selecting exactly the events `compilePredicate(ast)`
   * accepts; its values are appended to `params`. Never NULL.
   */
  function compileFilter(ast: FilterNode, params: SqlParams): string {
    switch (ast.kind) {
      case 'true':
        return d.true;
      case 'and':
        return `(${ast.items.map((i) => compileFilter(i, params)).join(' AND ')})`;
      case 'or':
        return `(${ast.items.map((i) => compileFilter(i, params)).join(' OR ')})`;
      case 'not':
        return negate(compileFilter(ast.item, params));
      case 'text':
        return containsText(resolveField('message', params), ast.value, params);
      case 'cond':
        return compileCond(ast, params);
      default:
        return ast satisfies never;
    }
  }

  return { compileFilter, numericTextSql };
}
