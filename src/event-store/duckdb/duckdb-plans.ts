import { COLUMN_KINDS, type EventColumn } from '../../core/event.js';
import { and, cond } from '../../filter/ast.js';
import {
  bucketWidth,
  type LastNPlan,
  type Metric,
  type PatternsPlan,
  type QueryPlan,
  type SearchPlan,
  type SummaryPlan,
  type TablePlan,
  type TimelinePlan,
  type TimeWindow,
  type TopNPlan,
} from '../query-plan.js';
import type { ResultRow, StatementRows } from '../result-shaper.js';
import { type OrderDialect, orderSql } from '../sql/order-sql.js';
import { compilePipes, type PipeDialect } from '../sql/pipe-sql.js';
import { type FieldColumnOf, quoteIdent, SqlParams, sqlTime } from '../sql/sql-params.js';
import { compileFilter, duckDbFilterDialect, numericTextSql } from './duckdb-filter-compiler.js';
import { MEMBERSHIP_COLUMN } from './duckdb-schema.js';
import type { WordRange } from './word-queries.js';

/** SQL text plus its bound values. */
export interface Compiled {
  sql: string;
  params: SqlParams;
  /** How the statement's rows read as neutral rows, when it returns its grand total among them. */
  read?: (rows: ResultRow[]) => StatementRows;
  /**
   * The statement whose rows are the answer, built from this one's rows (run after it on
   * the same connection); null when there is nothing to read.
   */
  followedBy?: (rows: ResultRow[]) => Compiled | null;
}

const isColumn = (field: string): field is EventColumn => Object.hasOwn(COLUMN_KINDS, field);

/**
 * A field as a SQL value: its column, or as an extra field (NULL when absent; in the
 * `fields` map or a column of its own, field-columns.ts).
 */
export function fieldSql(field: string, params: SqlParams): string {
  return isColumn(field) ? quoteIdent(field) : duckDbFilterDialect.extraField(field, params);
}

/** A field as grouped and returned: times as epoch ms, everything else as stored. */
export function groupSql(field: string, params: SqlParams): string {
  if (isColumn(field) && COLUMN_KINDS[field] === 'time') return `epoch_ms(${quoteIdent(field)})`;
  return fieldSql(field, params);
}

/**
 * What narrows a statement's scan beyond its plan's filter, as the store decides it (its
 * `reach`): `words`, the word index's candidate ranges; `streams`, the stream membership
 * bits that stand for the plan's scope (stream-sets.ts, ADR 0016). And where the fields
 * it reads are: `columnOf`, the extra fields kept in columns of their own (field-columns.ts).
 */
export interface Narrowing {
  readonly words?: readonly WordRange[];
  /** The filter requires a word of the message (word-queries.ts `testsWords`), narrowed or not. */
  readonly wordTest?: boolean;
  readonly streams?: bigint;
  readonly columnOf?: FieldColumnOf;
  /** Those columns, each with the field it holds, in the order the table has them. */
  readonly extraColumns?: ReadonlyArray<readonly [column: string, field: string]>;
  /**
   * The rows of the cold files the plan's range meets, in the hot table's shape
   * (cold-files.ts); undefined when it meets none.
   */
  readonly cold?: (params: SqlParams, range?: TimeWindow) => string;
  /** Every cold file `cold` reads is narrowed to the row groups its summary admits. */
  readonly coldNarrowed?: boolean;
}

/** A plan as a statement reads it: within its scope (by its filter or by `streams`), and narrowed. */
export interface Reach<P extends QueryPlan> extends Narrowing {
  readonly plan: P;
}

/**
 * What every query reads: `FROM … WHERE …` with the time range and the filter. `words`:
 * the word index's candidate ranges (inclusive, word-index.ts) when the filter requires
 * an indexed word. The range shrinks to them; with several, the rows are the union of
 * one scan per range (disjoint, so UNION ALL), each pruned by its own `ts` zone maps and
 * those of `stored_at` where its blocks kept their span (an OR of the ranges in one scan
 * measured up to twice as slow at 5–10 ranges, and is not pruned). None:
 * no event can match. `streams`: the membership bits the plan's scope is read by, when
 * it is (ADR 0016); none set: no event is in the scope.
 */
export function scanSql(
  filter: SearchPlan['filter'],
  range: TimeWindow,
  params: SqlParams,
  { words, streams, cold }: Narrowing = {},
): string {
  // No candidate: nothing to bind (DuckDB refuses values without placeholders).
  if (streams === 0n || (words?.length === 0 && !cold)) return 'FROM events WHERE false';
  // Stream membership: the store's own integer, written as it is (a bound value would
  // keep DuckDB from testing it in its scan).
  const member = streams === undefined ? '' : ` AND (${MEMBERSHIP_COLUMN} & ${streams}) <> 0`;
  const f = (filter.kind === 'true' ? '' : ` AND (${compileFilter(filter, params)})`) + member;
  const first = words?.[0];
  const last = words?.[words.length - 1];
  let from = 'events';
  let lo = range.fromMs;
  let hi = range.toMs;
  /** The one range's `stored_at` span, tested where the hot rows are read. */
  let stored = '';
  if (words && first && last) {
    lo = Math.max(lo, first.fromMs);
    hi = Math.min(hi, last.toMs + 1);
    if (words.length > 1) {
      const scans = words.map(
        (w) =>
          `SELECT * FROM events WHERE ts BETWEEN ${params.add(sqlTime(w.fromMs))} AND ${params.add(sqlTime(w.toMs))}${storedSql(w, params)}`,
      );
      from = `(${scans.join(' UNION ALL ')}) AS events`;
    } else stored = storedSql(first, params);
  }
  if (!cold)
    return `FROM ${from} WHERE ts >= ${params.add(sqlTime(lo))} AND ts < ${params.add(sqlTime(hi))}${stored}${f}`;
  // Both tiers as one relation: the hot rows narrowed by the word index, the cold files'
  // rows within the range, tested inside their scans (the word index covers hot rows only).
  const hot =
    words?.length === 0
      ? 'SELECT * FROM events WHERE false'
      : `SELECT * FROM ${from} WHERE ts >= ${params.add(sqlTime(lo))} AND ts < ${params.add(sqlTime(hi))}${stored}`;
  const [from2, to2] = [params.add(sqlTime(range.fromMs)), params.add(sqlTime(range.toMs))];
  const both = `(${hot} UNION ALL BY NAME SELECT * FROM (${cold(params, range)})) AS events`;
  return `FROM ${both} WHERE ts >= ${from2} AND ts < ${to2}${f}`;
}

/**
 * A range's `stored_at` span (word-queries.ts `StoredSpan`) as a test the scan prunes row
 * groups by: its blocks' rows, where `ts` alone would read every row group its time meets.
 */
const storedSql = (w: WordRange, params: SqlParams): string =>
  w.stored
    ? ` AND stored_at BETWEEN ${params.add(sqlTime(w.stored.from))} AND ${params.add(sqlTime(w.stored.to))}`
    : '';

export function searchCountSql(plan: SearchPlan, narrowing?: Narrowing): Compiled {
  const params = new SqlParams(undefined, narrowing?.columnOf);
  return {
    sql: `SELECT count(*) AS n ${scanSql(plan.filter, plan.range, params, narrowing)}`,
    params,
  };
}

/** How DuckDB orders a search (sql/order-sql.ts). */
export const DUCKDB_ORDER: OrderDialect = { fieldSql, numericTextSql };

export function searchRowsSql(plan: SearchPlan, narrowing?: Narrowing): Compiled {
  const params = new SqlParams(undefined, narrowing?.columnOf);
  const scan = scanSql(plan.filter, plan.range, params, narrowing);
  const order = orderSql(plan.sort, params, DUCKDB_ORDER);
  const sql = `SELECT * ${scan} ORDER BY ${order} LIMIT ${params.add(plan.limit)} OFFSET ${params.add(plan.offset)}`;
  return { sql, params };
}

/**
 * A page of at most this many rows is read by its keys first (`searchPageSql`); a larger
 * one as one statement (its keys would be as many bound values).
 */
export const KEYED_PAGE_ROWS = 10_000;

/**
 * A Search's page, in two statements when its filter is cheap to test: the page's keys
 * (`ts`, `ev_id`) first, which the engine sorts without reading any other column, then the
 * rows holding them, read within the keys' time span only (ADR 0019; at 10 M events on
 * DuckDB 1.5, no filter 16-18 ms against 29-39 as one statement, a host 9-11 against
 * 15-18). A filter that requires a word of the message is read in one statement: the
 * second would test every message of the keys' span again, the whole window for a rare
 * word (at 10 M, one in 10,000 messages: 310 ms in two, 225 in one; a common word 35-40
 * either way).
 */
export function searchPageSql(plan: SearchPlan, narrowing: Narrowing = {}): Compiled {
  // Cold files read whole by their summaries' leave: keys first there too (the word index
  // narrows the hot rows only); narrowed to their row groups, they are narrow already.
  const words = narrowing.words || narrowing.wordTest;
  if ((words && (!narrowing.cold || narrowing.coldNarrowed)) || plan.limit > KEYED_PAGE_ROWS)
    return searchRowsSql(plan, narrowing);
  const params = new SqlParams(undefined, narrowing.columnOf);
  const scan = scanSql(plan.filter, plan.range, params, narrowing);
  const order = orderSql(plan.sort, params, DUCKDB_ORDER);
  return {
    sql: `SELECT epoch_us(ts) AS us, ev_id ${scan} ORDER BY ${order} LIMIT ${params.add(plan.limit)} OFFSET ${params.add(plan.offset)}`,
    params,
    followedBy: (keys) => (keys.length === 0 ? null : keyedRowsSql(plan, narrowing, keys)),
  };
}

/** The rows of a page's keys: its scan within their time span, to those ids, in its order. */
function keyedRowsSql(plan: SearchPlan, narrowing: Narrowing, keys: readonly ResultRow[]): Compiled {
  const params = new SqlParams(undefined, narrowing.columnOf);
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const k of keys) {
    const us = Number(k.us);
    if (us < lo) lo = us;
    if (us > hi) hi = us;
  }
  const span: TimeWindow = { fromMs: Math.floor(lo / 1000), toMs: Math.floor(hi / 1000) + 1 };
  const scan = scanSql(plan.filter, span, params, narrowing);
  const ids = keys.map((k) => params.add(String(k.ev_id))).join(', ');
  const order = orderSql(plan.sort, params, DUCKDB_ORDER);
  // The same scan, so an id stored twice is still read only where it matches; LIMIT: never
  // more rows than keys.
  const sql = `SELECT * ${scan} AND ev_id IN (${ids}) ORDER BY ${order} LIMIT ${params.add(keys.length)}`;
  return { sql, params };
}

export function topnSql(plan: TopNPlan, narrowing?: Narrowing): Compiled {
  const params = new SqlParams(undefined, narrowing?.columnOf);
  const v = groupSql(plan.field, params);
  const scan = scanSql(plan.filter, plan.range, params, narrowing);
  // One pass: the per-value counts once, their grand total and the top n from them. A
  // window sum over every group would keep them all for the sort (a unique field: about
  // 10 % slower over 1 M events than the plain top n); the subquery lets the top n keep a
  // heap of n.
  const sql = `WITH g AS (
    SELECT ${v} AS v, count(*) AS c ${scan} AND ${v} IS NOT NULL GROUP BY ALL
  ) SELECT v, c, (SELECT sum(c) FROM g) AS total FROM g ORDER BY c DESC, v ASC LIMIT ${params.add(plan.n)}`;
  return { sql, params, read: (rows) => ({ rows, totals: { c: rows[0]?.total ?? 0 } }) };
}

export function lastnSql(plan: LastNPlan, narrowing?: Narrowing): Compiled {
  const params = new SqlParams(undefined, narrowing?.columnOf);
  const v = groupSql(plan.field, params);
  const scan = scanSql(plan.filter, plan.range, params, narrowing);
  const sql = `SELECT ${v} AS v, epoch_ms(max(ts)) AS last_seen, epoch_ms(min(ts)) AS first_seen, count(*) AS c
    ${scan} AND ${v} IS NOT NULL GROUP BY ALL
    ORDER BY last_seen DESC, v ASC LIMIT ${params.add(plan.n)}`;
  return { sql, params };
}

/**
 * A field as numeric metrics read it: integer columns as they are, time columns as Unix
 * seconds (the API's unit), text (other columns, extra fields) when `parseNumeric`
 * reads a number from it (filter/sort.ts: the same rule that sorts numbers first); any
 * other value is NULL, which the aggregates skip.
 */
function metricValueSql(field: string, raw: string, params: SqlParams): string {
  if (!isColumn(field)) return numericTextSql(raw, params);
  const kind = COLUMN_KINDS[field];
  switch (kind) {
    case 'integer':
      return `CAST(${raw} AS DOUBLE)`;
    case 'time':
      return `(epoch_ms(${raw}) / 1000)`;
    case 'string':
    case 'ip':
      return numericTextSql(raw, params);
    default:
      return kind satisfies never;
  }
}

function metricSql(m: Metric, params: SqlParams): string {
  if (m.op === 'count') return m.field ? `count(${fieldSql(m.field, params)})` : 'count(*)';
  const field = m.field ?? 'bytes';
  const raw = fieldSql(field, params);
  if (m.op === 'count_distinct') return `count(DISTINCT ${raw})`;
  const num = metricValueSql(field, raw, params);
  switch (m.op) {
    case 'sum':
      return `sum(${num})`;
    case 'avg':
      return `avg(${num})`;
    case 'min':
      return `min(${num})`;
    case 'max':
      return `max(${num})`;
    case 'p50':
      return `quantile_cont(${num}, 0.5)`;
    case 'p90':
      return `quantile_cont(${num}, 0.9)`;
    case 'p99':
      return `quantile_cont(${num}, 0.99)`;
    default:
      return m.op satisfies never;
  }
}

/**
 * Totals and the n largest groups in one pass: GROUPING SETS aggregates the groups and
 * the grand total (grouping id 1) together, and QUALIFY keeps the total and the top n.
 * (A CTE read twice, once for the total and once for the groups, is materialised whole
 * by DuckDB: at 100 M events it spilled and took 45 times its 10 M time.)
 */
export function summarySql(plan: SummaryPlan, narrowing?: Narrowing): Compiled {
  const params = new SqlParams(undefined, narrowing?.columnOf);
  const metrics = plan.metrics.map((m, i) => `${metricSql(m, params)} AS m${i}`);
  const groups = plan.groupBy.map((f, i) => `${groupSql(f, params)} AS g${i}`);
  const scan = scanSql(plan.filter, plan.range, params, narrowing);
  if (!groups.length) {
    return { sql: `SELECT count(*) AS c, ${metrics.join(', ')} ${scan}`, params };
  }
  const keys = plan.groupBy.map((_, i) => `g${i}`).join(', ');
  // The grand total's one row sorts first, so the first n + 1 rows are it and the n largest
  // groups: a top-n, where a window per grouping set cost ~1.5× the aggregation at 300,000
  // events.
  const sql = `SELECT CAST(grouping(${keys}) <> 0 AS INTEGER) AS total_row, ${keys}, count(*) AS c, ${metrics.join(', ')}
    FROM (SELECT ${groups.join(', ')}, * ${scan})
    GROUP BY GROUPING SETS ((${keys}), ())
    ORDER BY total_row DESC, c DESC, ${keys} LIMIT ${params.add(plan.n + 1)}`;
  const isTotal = (r: ResultRow) => Number(r.total_row) === 1;
  return {
    sql,
    params,
    read: (rows) => {
      const totals = rows.find(isTotal);
      return { rows: rows.filter((r) => !isTotal(r)), ...(totals ? { totals } : {}) };
    },
  };
}

export function timelineSql(plan: TimelinePlan, narrowing?: Narrowing): Compiled {
  const params = new SqlParams(undefined, narrowing?.columnOf);
  const interval = params.add(plan.intervalMs);
  const bucket = `(epoch_ms(ts) // ${interval}) * ${interval}`;
  const scan = scanSql(plan.filter, plan.range, params, narrowing);
  if (!plan.splitBy) {
    return {
      sql: `SELECT ${bucket} AS b, count(*) AS c ${scan} GROUP BY b ORDER BY b`,
      params,
    };
  }
  const v = groupSql(plan.splitBy, params);
  // The top series over the whole range by name, the rest folded into `other`. `base` is
  // read twice; materialised it would be copied whole (10 M events: 420 → 360 ms without).
  const sql = `WITH base AS NOT MATERIALIZED (SELECT ${bucket} AS b, CAST(${v} AS VARCHAR) AS v ${scan}),
    top AS (SELECT v FROM base WHERE v IS NOT NULL GROUP BY v ORDER BY count(*) DESC, v LIMIT ${params.add(plan.series)})
    SELECT b, CASE WHEN v IN (SELECT v FROM top) THEN v ELSE NULL END AS s, count(*) AS c
    FROM base GROUP BY ALL ORDER BY b`;
  return { sql, params };
}

export function patternCountsSql(plan: PatternsPlan, narrowing?: Narrowing): Compiled {
  const params = new SqlParams(undefined, narrowing?.columnOf);
  const from = params.add(plan.range.fromMs);
  const width = params.add(bucketWidth(plan));
  const scan = scanSql(plan.filter, plan.range, params, narrowing);
  // One scan: counts per pattern and bucket, the top n patterns by their sum, and their rows.
  const sql = `WITH g AS MATERIALIZED (
    SELECT pattern_id AS v, (epoch_ms(ts) - ${from}) // ${width} AS b, count(*) AS c,
      epoch_ms(min(ts)) AS first_seen, epoch_ms(max(ts)) AS last_seen
    ${scan} AND pattern_id IS NOT NULL GROUP BY ALL
  ), t AS (SELECT v, sum(c) AS n FROM g GROUP BY v ORDER BY n DESC, v ASC LIMIT ${params.add(plan.n)})
  SELECT v, b, c, first_seen, last_seen, (SELECT sum(c) FROM g) AS total FROM g SEMI JOIN t USING (v)`;
  return { sql, params };
}

export function patternSamplesSql(
  plan: PatternsPlan,
  ids: readonly string[],
  narrowing?: Narrowing,
): Compiled {
  const params = new SqlParams(undefined, narrowing?.columnOf);
  const filter = and(plan.filter, cond('pattern_id', 'in', ids));
  const keys = scanSql(filter, plan.range, params, narrowing);
  const rows = scanSql(filter, plan.range, params, narrowing);
  // The newest 3 of each pattern are among its events at its 3 newest times: those times
  // by an aggregate (max(ts, 3): no sort of every row, and no arg-max over (ts, ev_id),
  // which took 48 ms over 1 M events where this takes 18), then the events of the same
  // patterns at any of them (a pattern's own among them hold its newest 3), cut to 3 each
  // by (ts, ev_id) as before. The second scan is the first's filter, so it reads only what
  // the caller may.
  return {
    sql: `WITH k AS (SELECT unnest(max(ts, 3)) AS kt ${keys} GROUP BY pattern_id)
      SELECT pattern_id AS v, ev_id, epoch_ms(ts) AS ts, message ${rows} AND ts IN (SELECT kt FROM k)
      QUALIFY row_number() OVER (PARTITION BY pattern_id ORDER BY ts DESC, ev_id DESC) <= 3
      ORDER BY v, ts DESC, ev_id DESC`,
    params,
  };
}

/** What pipes need, in DuckDB's words (sql/pipe-sql.ts). */
export const DUCKDB_PIPES: PipeDialect = {
  standardNullLogic: true,
  true: 'true',
  false: 'false',
  field(name, params) {
    if (isColumn(name) && COLUMN_KINDS[name] === 'time')
      return `(CAST(epoch_ms(${quoteIdent(name)}) AS DOUBLE) / 1000)`;
    return fieldSql(name, params);
  },
  eventMs: 'epoch_ms(ts)',
  double: (x) => `CAST(${x} AS DOUBLE)`,
  numericText: (x, params) => numericTextSql(x, params),
  // As JavaScript writes numbers: whole ones below 10^21 as digits (DuckDB's own text uses
  // an exponent from 10^15 on; past 2^53 its digits are the shortest round-trip ones, as
  // JavaScript's, then zeros); 10^-6 ≤ |x| < 10^-4 without an exponent (DuckDB writes
  // `9.9e-05`, JavaScript `0.000099`); an exponent without a leading zero (`e-7`, not `e-07`);
  // an overflow `Infinity` (DuckDB writes `inf`).
  numberText: (x) => {
    const text = `CAST(${x} AS VARCHAR)`;
    // Past 2^53 JavaScript writes the shortest round-trip digits and zeros, not the double's exact value.
    const wholeFromExponent = `(CASE WHEN ${x} < 0 THEN '-' ELSE '' END) || rpad(replace(regexp_extract(${text}, '^-?([0-9.]+)e', 1), '.', ''), CAST(regexp_extract(${text}, 'e\\+([0-9]+)$', 1) AS INTEGER) + 1, '0')`;
    const fixed = `(CASE WHEN ${x} < 0 THEN '-' ELSE '' END) || '0.' || repeat('0', CAST(right(${text}, 1) AS INTEGER) - 1) || replace(regexp_extract(${text}, '^-?([0-9.]+)e', 1), '.', '')`;
    return `(CASE WHEN isinf(${x}) THEN (CASE WHEN ${x} > 0 THEN 'Infinity' ELSE '-Infinity' END)
      WHEN isnan(${x}) THEN 'NaN'
      WHEN ${x} = floor(${x}) AND abs(${x}) < 1e21 THEN (CASE WHEN contains(${text}, 'e+') THEN ${wholeFromExponent} ELSE CAST(CAST(${x} AS HUGEINT) AS VARCHAR) END)
      WHEN regexp_matches(${text}, 'e-0[56]$') THEN ${fixed}
      ELSE regexp_replace(${text}, 'e-0([0-9])$', 'e-\\1') END)`;
  },
  lower: (x) => `lower(${x})`,
  upper: (x) => `upper(${x})`,
  length: (x) => `length(${x})`,
  capture(x, regex, group, params) {
    const re = params.add(regex);
    return `(CASE WHEN regexp_matches(${x}, ${re}) THEN regexp_extract(${x}, ${re}, ${Math.trunc(group)}) END)`;
  },
  countAll: 'count(*)',
  countDistinct: (x) => `count(DISTINCT ${x})`,
  aggregate: (op, x) => `${op}(${x})`,
  quantile: (x, q) => `quantile_cont(${x}, ${Number(q)})`,
  topPerGroup: (select, groupBy, partition, orderBy, n) =>
    `${select} GROUP BY ${groupBy} QUALIFY row_number() OVER (${partition ? `PARTITION BY ${partition} ` : ''}ORDER BY ${orderBy}) <= ${n}`,
  sumCounts: (n) => `CAST(sum(${n}) AS BIGINT)`,
  mostCommon: (x, n) => `min_by(${x}, (-${n}, ${x}))`,
  // The pairs as two values, JSON lists, joined by a hash: over 1 M events of 10,000 ids,
  // 10,000 pairs bound one by one took 0.9-1.2 s (list_position per row the slower), as
  // JSON 85-130 ms (the same statement without the groups 40-70).
  withGroup(select, x, from, to, params, n) {
    const list = (v: readonly string[]) =>
      `unnest(from_json(${params.add(JSON.stringify(v))}, '["VARCHAR"]'))`;
    return `SELECT r${n}.*, coalesce(g${n}._gof, r${n}.${x}) AS _pg FROM (${select}) AS r${n}
      LEFT JOIN (SELECT ${list(from)} AS _gid, ${list(to)} AS _gof) AS g${n} ON r${n}.${x} = g${n}._gid`;
  },
  in: (x, subquery) => `${x} IN (${subquery})`,
  /**
   * In one pass over the aggregated rows (a UNION read them twice: 51 ms for a 24-bucket
   * timechart by host over 1 M events, this 27): per series its buckets and values as
   * lists, then every bucket start, each value found by its bucket's position (0 where absent).
   */
  fillBuckets(f) {
    const s = f.series;
    const lists = f.aggs.map((id, i) => `list(${id} ORDER BY b) AS _v${f.n}_${i}`).join(', ');
    const at = `list_position(_b${f.n}, b)`;
    const from = `CAST(${f.from} AS BIGINT)`;
    const span = `CAST(${f.span} AS BIGINT)`;
    return `SELECT CAST(b AS DOUBLE) / 1000 AS ${f.time}${s ? `, ${s}` : ''}, ${f.aggs
      .map((id, i) => `coalesce(_v${f.n}_${i}[${at}], 0) AS ${id}`)
      .join(', ')}
      FROM (SELECT *, unnest(range(${from}, ${from} + CAST(${f.count} AS BIGINT) * ${span}, ${span})) AS b
        FROM (SELECT ${s ? `${s}, ` : ''}list(b ORDER BY b) AS _b${f.n}, ${lists} FROM (${f.inner}) AS i${f.n}${s ? ` GROUP BY ${s}` : ''}) AS g${f.n}) AS x${f.n}`;
  },
  floorTo: (x, span) => `((${x} // CAST(${span} AS BIGINT)) * CAST(${span} AS BIGINT))`,
};

export function tableSql(plan: TablePlan, what: 'rows' | 'count', narrowing?: Narrowing): Compiled {
  const params = new SqlParams(undefined, narrowing?.columnOf);
  const scan = scanSql(plan.filter, plan.range, params, narrowing);
  return { sql: compilePipes(DUCKDB_PIPES, plan.program, scan, plan.range, params, what), params };
}

const HOUR_MS = 3_600_000;

/**
 * The event `evId` names. The ULID's time is the receive time (or, after a clock step
 * back, a little later): a narrow range on received_at lets DuckDB's zone maps skip
 * almost every row group.
 */
export function byIdSql(evId: string, receivedAt: number, cold?: Narrowing['cold']): Compiled {
  const params = new SqlParams();
  const lo = params.add(sqlTime(receivedAt - HOUR_MS));
  const hi = params.add(sqlTime(receivedAt + 1000));
  const id = params.add(evId);
  const hot = `SELECT * FROM events WHERE received_at BETWEEN ${lo} AND ${hi} AND ev_id = ${id}`;
  // The cold files whose id range holds it, besides (an event is in one tier).
  const both = cold ? `${hot} UNION ALL BY NAME SELECT * FROM (${cold(params)}) WHERE ev_id = ${id}` : hot;
  return { sql: `${both} LIMIT 1`, params };
}

/** Events per hour of `ts` (the store runtime's estimate), of both tiers. */
export const hourCountsSql = (cold?: Narrowing['cold']): Compiled => {
  const params = new SqlParams();
  const from = cold ? `(SELECT ts FROM events UNION ALL SELECT ts FROM (${cold(params)}))` : 'events';
  return { sql: `SELECT epoch_ms(ts) // ${HOUR_MS} AS h, count(*) AS n FROM ${from} GROUP BY h`, params };
};
