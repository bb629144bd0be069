import {
  type Agg,
  type ColType,
  type Cond,
  type Expr,
  MAX_TABLE_ROWS,
  type OrderKey,
  type Program,
  TIMECHART_SERIES,
} from '../../pipes/program.js';
import { timechartBuckets } from '../../pipes/timechart.js';
import type { TimeWindow } from '../query-plan.js';
import { quoteIdent, SqlParams } from './sql-params.js';

/**
 * How one engine spells what pipes need (docs/query-language.md#pipes); the compiler below is the same for
 * every engine, as the filter compiler is. Values written into SQL go through `params`.
 */
export interface PipeDialect {
  readonly true: string;
  readonly false: string;
  /** `NULL OR true` is true (DuckDB); ClickHouse 18.16 gives NULL. */
  readonly standardNullLogic: boolean;
  /** An event field as the program reads it: times as Unix seconds (a double), integers as numbers, the rest text; NULL when absent. */
  field(name: string, params: SqlParams): string;
  /** The event's time in Unix ms (an integer). */
  readonly eventMs: string;
  double(x: string): string;
  /** Text read as a number as `parseNumeric` reads it, else NULL. */
  numericText(x: string, params: SqlParams): string;
  /** A number as text: whole numbers without a fraction. */
  numberText(x: string): string;
  lower(x: string): string;
  upper(x: string): string;
  /** Length in code points. */
  length(x: string): string;
  /** Group `group` of `regex` (whose only capturing groups are its `groups` plain ones) on `x`; NULL without a match. */
  capture(x: string, regex: string, group: number, params: SqlParams): string;
  /** `count(*)`. */
  readonly countAll: string;
  countDistinct(x: string): string;
  /** sum, avg, min, max of numbers (NULL over none); `q`: the interpolated quantile. */
  aggregate(op: 'sum' | 'avg' | 'min' | 'max', x: string): string;
  quantile(x: string, q: number, n: number): string;
  /** `select` (grouped by `groupBy`, ordered by `orderBy`) keeping the first `n` rows of each `partition`. */
  topPerGroup(
    select: string,
    groupBy: string,
    partition: string | undefined,
    orderBy: string,
    n: string,
  ): string;
  /** The sum of counts (`countAll`'s), of the type `countAll` has. */
  sumCounts(n: string): string;
  /** The `x` of the largest `n` of a group, among equal `n` the least `x` (text, by code point). */
  mostCommon(x: string, n: string): string;
  /**
   * `select` (a SELECT with a text column `x`, a row per value) with one more column, `_pg`:
   * `to[i]` where `x` is `from[i]`, else `x`. Up to some 10,000 pairs, each looked up by a
   * hash, not by a scan of the list per row. `n`: a number unique in the statement, for aliases.
   */
  withGroup(
    select: string,
    x: string,
    from: readonly string[],
    to: readonly string[],
    params: SqlParams,
    n: number,
  ): string;
  /** `x IN (subquery)` (ClickHouse: GLOBAL IN, which a Distributed table runs once). */
  in(x: string, subquery: string): string;
  /**
   * A timechart's rows from `inner` (one row per bucket `b` and series with its aggregates,
   * none NULL): every bucket start (`from`, `span` apart, `count` of them) of every series
   * present, as `time` (Unix seconds), the series and the aggregates (0 where absent).
   */
  fillBuckets(f: FillSpec): string;
  /** `x` rounded down to a multiple of `span` (integers). */
  floorTo(x: string, span: string): string;
}

/** What a dialect's `fillBuckets` fills (identifiers quoted, values as placeholders). */
export interface FillSpec {
  inner: string;
  time: string;
  series?: string;
  aggs: readonly string[];
  from: string;
  span: string;
  count: string;
  /** A number unique in the statement, for aliases. */
  n: number;
}

/** The largest derived column (expression nodes, written out) put into its uses instead of made a column. */
const INLINE_MAX = 200;

/**
 * The largest operand (expression nodes, written out) a dialect may write more than once
 * (a number as text writes its own six times on ClickHouse); a larger one is made a column
 * first, so the SQL grows with the query's length, never by a product of its depth.
 */
const REPEAT_MAX = 12;

/** What a value computed by `e` is, for a column made of it. */
const typeOf = (e: Expr): ColType =>
  e.k === 'ref' ? e.type : ['num', 'tonum', 'neg', 'arith', 'len'].includes(e.k) ? 'number' : 'string';

/** Arithmetic written as it is: anything but a division by a value that may be 0 (which tests it first). */
const isPlainDivision = (e: Extract<Expr, { k: 'arith' }>) =>
  e.op !== '/' || (e.b.k === 'num' && e.b.v !== 0);

/** How many times `d` writes the operand of each one-operand node. */
function writtenTimes(
  d: PipeDialect,
): Record<'tonum' | 'totext' | 'neg' | 'lower' | 'upper' | 'len' | 'capture', number> {
  const mark = '\u0001';
  const times = (sql: string) => Math.max(1, sql.split(mark).length - 1);
  const scratch = new SqlParams();
  return {
    tonum: times(d.numericText(mark, scratch)),
    totext: times(d.numberText(mark)),
    neg: times(d.double(mark)),
    lower: times(d.lower(mark)),
    upper: times(d.upper(mark)),
    len: times(d.length(mark)),
    capture: times(d.capture(mark, '(x)', 1, scratch)),
  };
}

const CMP: Record<string, string> = { '=': '=', '!=': '<>', '>': '>', '>=': '>=', '<': '<', '<=': '<=' };

/**
 * Compiles a program's rows (`what`; at most MAX_TABLE_ROWS + 1, ordered) or their number over `scan` (`FROM … WHERE …`: the range, the filter and the read
 * scope, already made by the store) into SQL: each stage wraps the relation before it as
 * a subquery, a `where` adds to its WHERE, an order is kept and applied where rows are
 * cut (`limit`) and at the end. Column ids (`_c1`, …) are the program's; event fields are
 * the store's columns, read through the dialect.
 */
export function compilePipes(
  d: PipeDialect,
  program: Program,
  scan: string,
  range: TimeWindow,
  params: SqlParams,
  what: 'rows' | 'count',
): string {
  let rel = scan;
  let order: readonly OrderKey[] = [];
  let n = 0;
  const wrap = (select: string) => {
    n++;
    return `FROM (${select}) AS t${n} WHERE ${d.true}`;
  };
  /**
   * Derived columns written into the expressions that use them rather than made by a
   * subquery: a `where` or an aggregate over them then reads the table itself (on a
   * Distributed table, aggregated on each shard: a subquery first was 2.5 times slower).
   * Each is compiled where it is used (so an unused one binds no value); one of more than
   * INLINE_MAX nodes written out is made a column instead, so a chain of evals stays small.
   */
  const inline = new Map<string, { e: Expr; nodes: number }>();
  // Nodes are counted as written out: the dialect writes some operands more than once (a
  // number as text writes its own six times on ClickHouse, a division its divisor twice),
  // so nested ones grow the SQL by a product, not a sum (ClickHouse refused "AST is too
  // big" for two evals of a few nodes each, a property test found).
  const written = writtenTimes(d);
  const nodes = (e: Expr): number => {
    switch (e.k) {
      case 'num':
      case 'str':
        return 1;
      case 'ref':
        return 'col' in e.ref ? (inline.get(e.ref.col)?.nodes ?? 1) : 1;
      case 'arith':
        return 1 + nodes(e.a) + (isPlainDivision(e) ? 1 : 2) * nodes(e.b);
      case 'concat':
        return 1 + e.args.reduce((n, a) => n + nodes(a), 0);
      default:
        return 1 + written[e.k] * nodes(e.e);
    }
  };
  /** The relation with its pending derived columns made real: `SELECT *, …` for a wrap. */
  const star = () => ['*', ...[...inline].map(([id, d]) => `${expr(d.e)} AS ${quoteIdent(id)}`)].join(', ');

  /**
   * `e` with every operand the dialect writes more than once kept within REPEAT_MAX nodes:
   * a larger one is made a column of the relation first (a pending derived column it
   * reads, by making those real). Called on a stage's expressions before its SQL is made,
   * as it may wrap the relation.
   */
  let made = 0;
  const once = (e: Expr): Expr => {
    if (nodes(e) <= REPEAT_MAX) return e;
    if (e.k === 'ref') {
      rel = wrap(`SELECT ${star()} ${rel}`);
      inline.clear();
      return e;
    }
    const id = `_h${++made}`;
    rel = wrap(`SELECT ${star()}, ${expr(e)} AS ${quoteIdent(id)} ${rel}`);
    inline.clear();
    return { k: 'ref', ref: { col: id }, type: typeOf(e) };
  };
  const prepare = (e: Expr): Expr => {
    switch (e.k) {
      case 'num':
      case 'str':
      case 'ref':
        return e;
      case 'arith': {
        const a = prepare(e.a);
        const b = prepare(e.b);
        return { ...e, a, b: isPlainDivision(e) ? b : once(b) };
      }
      case 'concat':
        return { ...e, args: e.args.map(prepare) };
      default: {
        const inner = prepare(e.e);
        return { ...e, e: written[e.k] > 1 ? once(inner) : inner };
      }
    }
  };
  const prepareCond = (c: Cond): Cond =>
    c.k === 'cmp'
      ? { ...c, e: prepare(c.e) }
      : c.k === 'not'
        ? { ...c, c: prepareCond(c.c) }
        : { ...c, items: c.items.map(prepareCond) };
  const prepareKeys = <K extends { e: Expr }>(keys: readonly K[]): K[] =>
    keys.map((k) => ({ ...k, e: prepare(k.e) }));
  const prepareAggs = (aggs: readonly Agg[]): Agg[] => aggs.map((a) => (a.e ? { ...a, e: prepare(a.e) } : a));

  // Numbers go in as text cast to a double: bound as a number, an integer beyond int64 has no type.
  const lit = (v: number | string) =>
    typeof v === 'number' ? d.double(params.add(String(v))) : params.add(v);

  const expr = (e: Expr): string => {
    switch (e.k) {
      case 'num':
      case 'str':
        return lit(e.v);
      case 'ref': {
        if ('field' in e.ref) return d.field(e.ref.field, params);
        const derived = inline.get(e.ref.col);
        return derived === undefined ? quoteIdent(e.ref.col) : `(${expr(derived.e)})`;
      }
      case 'tonum':
        return d.numericText(expr(e.e), params);
      case 'totext':
        return d.numberText(expr(e.e));
      case 'neg':
        return `(-${d.double(expr(e.e))})`;
      case 'arith': {
        const a = d.double(expr(e.a));
        const b = d.double(expr(e.b));
        // A division by zero is missing; by a number other than 0, a plain division.
        if (!isPlainDivision(e)) return `(CASE WHEN ${b} = 0 THEN NULL ELSE ${a} / ${b} END)`;
        return `(${a} ${e.op} ${b})`;
      }
      case 'concat': {
        // ClickHouse's concat takes at least two arguments.
        const args = e.args.map((a) => `coalesce(${expr(a)}, '')`);
        return `concat(${[...args, ...(args.length < 2 ? ["''"] : [])].join(', ')})`;
      }
      case 'lower':
        return d.lower(expr(e.e));
      case 'upper':
        return d.upper(expr(e.e));
      case 'len':
        return d.length(expr(e.e));
      case 'capture':
        return d.capture(expr(e.e), e.regex, e.group, params);
      default:
        return e satisfies never;
    }
  };

  /**
   * A condition as SQL. A missing value matches no comparison (and NOT of it matches), so
   * under a NOT a comparison is `coalesce(…, false)`. Where the condition stands in a WHERE
   * (`bare`: no NOT above it), NULL already drops the row, so the comparison stays bare
   * (13 ms of 78 over 10 M events); through OR only with SQL's NULL logic (ClickHouse 18.16
   * makes NULL OR true NULL).
   */
  const cond = (c: Cond, bare: boolean): string => {
    switch (c.k) {
      case 'and':
        return `(${c.items.map((i) => cond(i, bare)).join(' AND ')})`;
      case 'or':
        return `(${c.items.map((i) => cond(i, bare && d.standardNullLogic)).join(' OR ')})`;
      case 'not':
        return `(NOT ${cond(c.c, false)})`;
      case 'cmp': {
        const test = `(${expr(c.e)} ${CMP[c.op]} ${lit(c.v)})`;
        return bare ? test : `coalesce(${test}, ${d.false})`;
      }
      default:
        return c satisfies never;
    }
  };

  const agg = (a: Agg): string => {
    const x = a.e ? expr(a.e) : '';
    switch (a.op) {
      case 'count':
        return a.e ? `count(${x})` : d.countAll;
      case 'count_distinct':
        return d.countDistinct(x);
      case 'sum':
      case 'avg':
      case 'min':
      case 'max':
        return d.aggregate(a.op, d.double(x));
      default:
        n++;
        return d.quantile(d.double(x), { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 }[a.op], n);
    }
  };

  const orderList = (keys: readonly OrderKey[]) =>
    keys.map((k) => `${expr(k.e)} ${k.desc ? 'DESC' : 'ASC'} NULLS LAST`).join(', ');
  /** ` ORDER BY …`, or nothing for a relation of one row (stats without by). */
  const orderBy = (keys: readonly OrderKey[]) => (keys.length ? ` ORDER BY ${orderList(keys)}` : '');

  for (const st of program.stages) {
    switch (st.s) {
      case 'derive': {
        const e = prepare(st.e);
        const size = nodes(e);
        if (size <= INLINE_MAX) inline.set(st.id, { e, nodes: size });
        else {
          rel = wrap(`SELECT ${star()}, ${expr(e)} AS ${quoteIdent(st.id)} ${rel}`);
          inline.clear();
        }
        break;
      }
      case 'filter': {
        const c = prepareCond(st.cond);
        rel = `${rel} AND ${cond(c, true)}`;
        break;
      }
      case 'order':
        order = st.keys;
        break;
      case 'limit':
        order = prepareKeys(order);
        rel = wrap(`SELECT ${star()} ${rel}${orderBy(order)} LIMIT ${params.add(st.n)}`);
        inline.clear();
        break;
      case 'group': {
        const keys = prepareKeys(st.keys);
        const cols = [
          ...keys.map((k) => `${expr(k.e)} AS ${quoteIdent(k.id)}`),
          ...prepareAggs(st.aggs).map((a) => `${agg(a)} AS ${quoteIdent(a.id)}`),
        ];
        const by = keys.length ? ` GROUP BY ${keys.map((k) => quoteIdent(k.id)).join(', ')}` : '';
        rel = wrap(`SELECT ${cols.join(', ')} ${rel}${by}`);
        inline.clear();
        break;
      }
      case 'top': {
        const key = quoteIdent(st.key.id);
        const by = st.by ? quoteIdent(st.by.id) : undefined;
        const count = quoteIdent(st.countId);
        const byE = st.by ? prepare(st.by.e) : undefined;
        const keyE = prepare(st.key.e);
        const cols = [
          ...(byE ? [`${expr(byE)} AS ${by}`] : []),
          `${expr(keyE)} AS ${key}`,
          `${d.countAll} AS ${count}`,
        ];
        const select = `SELECT ${cols.join(', ')} ${rel} AND ${expr(keyE)} IS NOT NULL`;
        const groupBy = [...(by ? [by] : []), key].join(', ');
        // The tie-break reads the key by its alias, as the relation after this stage does.
        rel = wrap(
          d.topPerGroup(select, groupBy, by, `${count} DESC, ${orderList(st.tieBreak)}`, params.add(st.n)),
        );
        inline.clear();
        break;
      }
      case 'timechart': {
        const { fromMs, spanMs, count } = timechartBuckets(range, st.spanMs);
        const span = params.add(spanMs);
        const b = `${d.floorTo(d.eventMs, span)}`;
        let series = '';
        const aggs = prepareAggs(st.aggs);
        if (st.by) {
          const v = expr(prepare(st.by.e));
          // Ties in count go to the value sort puts first: a series name is text, numbers first.
          const top = `SELECT ${v} AS v ${rel} AND ${v} IS NOT NULL GROUP BY v ORDER BY ${d.countAll} DESC, ${d.numericText('v', params)} ASC NULLS LAST, v ASC LIMIT ${params.add(TIMECHART_SERIES)}`;
          series = `CASE WHEN ${d.in(v, top)} THEN ${v} ELSE 'other' END`;
        }
        const aggIds = st.aggs.map((a) => quoteIdent(a.id));
        const sId = st.by ? quoteIdent(st.by.id) : undefined;
        // Each (bucket, series) once, an empty aggregate 0; then every bucket of every series.
        const inner = `SELECT ${b} AS b${sId ? `, ${series} AS ${sId}` : ''}, ${aggs
          .map((a, i) => `coalesce(${d.double(agg(a))}, 0) AS ${aggIds[i]}`)
          .join(', ')} ${rel} GROUP BY b${sId ? `, ${sId}` : ''}`;
        n++;
        rel = wrap(
          d.fillBuckets({
            inner,
            time: quoteIdent(st.timeId),
            aggs: aggIds,
            from: params.add(fromMs),
            span,
            count: params.add(count),
            n,
            ...(sId ? { series: sId } : {}),
          }),
        );
        inline.clear();
        break;
      }
      case 'patterns': {
        const p = d.field('pattern_id', params);
        const having = `${rel} AND ${p} IS NOT NULL`;
        const [key, count, share] = [st.keyId, st.countId, st.shareId].map(quoteIdent);
        const total = `(SELECT ${d.countAll} ${having})`;
        const groups = st.groups?.ids.length ? st.groups : undefined;
        if (!groups)
          rel = wrap(
            `SELECT ${p} AS ${key}, ${d.countAll} AS ${count}, ${d.double(d.countAll)} / ${total} AS ${share} ${having} GROUP BY ${key}`,
          );
        else {
          // Counted per id, then per group of ids: the group's most common id stands for it.
          n++;
          const perId = `SELECT ${p} AS _pid, ${d.countAll} AS _pn ${having} GROUP BY _pid`;
          const sum = d.sumCounts('_pn');
          rel = wrap(
            `SELECT ${d.mostCommon('_pid', '_pn')} AS ${key}, ${sum} AS ${count}, ${d.double(sum)} / ${total} AS ${share} FROM (${d.withGroup(perId, '_pid', groups.ids, groups.of, params, n)}) AS p${n} GROUP BY _pg`,
          );
        }
        inline.clear();
        break;
      }
      default:
        st satisfies never;
    }
  }
  if (what === 'count') return `SELECT ${d.countAll} AS n ${rel}`;
  // One row past the most a table holds tells the caller it was cut (then it counts).
  const columns = prepareKeys(program.columns);
  order = prepareKeys(order);
  const cols = columns.map((c, i) => `${expr(c.e)} AS c${i}`).join(', ');
  return `SELECT ${cols} ${rel}${orderBy(order)} LIMIT ${params.add(MAX_TABLE_ROWS + 1)}`;
}
