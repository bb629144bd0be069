import {
  type Agg,
  type Cond,
  type Expr,
  MAX_TABLE_ROWS,
  type OrderKey,
  type Program,
  TIMECHART_SERIES,
} from '../../pipes/program.js';
import { timechartBuckets } from '../../pipes/timechart.js';
import type { TimeWindow } from '../query-plan.js';
import { quoteIdent, type SqlParams } from './sql-params.js';

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
  const nodes = (e: Expr): number => {
    switch (e.k) {
      case 'num':
      case 'str':
        return 1;
      case 'ref':
        return 'col' in e.ref ? (inline.get(e.ref.col)?.nodes ?? 1) : 1;
      case 'arith':
        return 1 + nodes(e.a) + nodes(e.b);
      case 'concat':
        return 1 + e.args.reduce((n, a) => n + nodes(a), 0);
      default:
        return 1 + nodes(e.e);
    }
  };
  /** The relation with its pending derived columns made real: `SELECT *, …` for a wrap. */
  const star = () => ['*', ...[...inline].map(([id, d]) => `${expr(d.e)} AS ${quoteIdent(id)}`)].join(', ');

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
        if (e.op === '/' && !(e.b.k === 'num' && e.b.v !== 0))
          return `(CASE WHEN ${b} = 0 THEN NULL ELSE ${a} / ${b} END)`;
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
        const size = nodes(st.e);
        if (size <= INLINE_MAX) inline.set(st.id, { e: st.e, nodes: size });
        else {
          rel = wrap(`SELECT ${star()}, ${expr(st.e)} AS ${quoteIdent(st.id)} ${rel}`);
          inline.clear();
        }
        break;
      }
      case 'filter':
        rel = `${rel} AND ${cond(st.cond, true)}`;
        break;
      case 'order':
        order = st.keys;
        break;
      case 'limit':
        rel = wrap(`SELECT ${star()} ${rel}${orderBy(order)} LIMIT ${params.add(st.n)}`);
        inline.clear();
        break;
      case 'group': {
        const cols = [
          ...st.keys.map((k) => `${expr(k.e)} AS ${quoteIdent(k.id)}`),
          ...st.aggs.map((a) => `${agg(a)} AS ${quoteIdent(a.id)}`),
        ];
        const by = st.keys.length ? ` GROUP BY ${st.keys.map((k) => quoteIdent(k.id)).join(', ')}` : '';
        rel = wrap(`SELECT ${cols.join(', ')} ${rel}${by}`);
        inline.clear();
        break;
      }
      case 'top': {
        const key = quoteIdent(st.key.id);
        const by = st.by ? quoteIdent(st.by.id) : undefined;
        const count = quoteIdent(st.countId);
        const cols = [
          ...(st.by ? [`${expr(st.by.e)} AS ${by}`] : []),
          `${expr(st.key.e)} AS ${key}`,
          `${d.countAll} AS ${count}`,
        ];
        const select = `SELECT ${cols.join(', ')} ${rel} AND ${expr(st.key.e)} IS NOT NULL`;
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
        if (st.by) {
          const v = expr(st.by.e);
          // Ties in count go to the value sort puts first: a series name is text, numbers first.
          const top = `SELECT ${v} AS v ${rel} AND ${v} IS NOT NULL GROUP BY v ORDER BY ${d.countAll} DESC, ${d.numericText('v', params)} ASC NULLS LAST, v ASC LIMIT ${params.add(TIMECHART_SERIES)}`;
          series = `CASE WHEN ${d.in(v, top)} THEN ${v} ELSE 'other' END`;
        }
        const aggIds = st.aggs.map((a) => quoteIdent(a.id));
        const sId = st.by ? quoteIdent(st.by.id) : undefined;
        // Each (bucket, series) once, an empty aggregate 0; then every bucket of every series.
        const inner = `SELECT ${b} AS b${sId ? `, ${series} AS ${sId}` : ''}, ${st.aggs
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
        rel = wrap(
          `SELECT ${p} AS ${quoteIdent(st.keyId)}, ${d.countAll} AS ${quoteIdent(st.countId)}, ${d.double(d.countAll)} / (SELECT ${d.countAll} ${having}) AS ${quoteIdent(st.shareId)} ${having} GROUP BY ${quoteIdent(st.keyId)}`,
        );
        inline.clear();
        break;
      }
      default:
        st satisfies never;
    }
  }
  if (what === 'count') return `SELECT ${d.countAll} AS n ${rel}`;
  // One row past the most a table holds tells the caller it was cut (then it counts).
  const cols = program.columns.map((c, i) => `${expr(c.e)} AS c${i}`).join(', ');
  return `SELECT ${cols} ${rel}${orderBy(order)} LIMIT ${params.add(MAX_TABLE_ROWS + 1)}`;
}
