import { COLUMN_KINDS, type EventColumn } from '../../core/event.js';
import { and, cond } from '../../filter/ast.js';
import { rewriteGroups } from '../../filter/regex.js';
import type { PlanDialect } from '../plan-executor.js';
import {
  bucketWidth,
  type LastNPlan,
  type Metric,
  type PatternsPlan,
  type SearchPlan,
  type SummaryPlan,
  type TablePlan,
  type TimelinePlan,
  type TimeWindow,
  type TopNPlan,
} from '../query-plan.js';
import { scopedPlan } from '../read-scope.js';
import { type OrderDialect, orderSql } from '../sql/order-sql.js';
import { compilePipes, type PipeDialect } from '../sql/pipe-sql.js';
import { quoteIdent, SqlParams, sqlTime } from '../sql/sql-params.js';
import {
  clickHouseBind,
  clickHouseFilterDialect,
  compileFilter,
  numericTextSql,
} from './clickhouse-filter-compiler.js';
import { clickHouseLiteral } from './clickhouse-literal.js';
import { rowToEvent } from './clickhouse-schema.js';

/**
 * The plans (query-plan.ts) in ClickHouse SQL, for every server from 18.16 on. Each
 * returns the column names the result shaper reads (result-shaper.ts). Values are written
 * by the audited literal function (`clickHouseBind`); `table` is the table to read (the
 * Distributed one on a cluster).
 *
 * Where ClickHouse differs from DuckDB's plans (duckdb-plans.ts):
 * - the grand totals of TopN and Summary come from `WITH TOTALS` in the same pass (18.16
 *   has no GROUPING SETS); the statement is read in the `JSON` format, which carries them;
 * - p50/p90/p99 interpolate linearly between the two nearest values, as DuckDB's
 *   `quantile_cont`, over the sorted values (18.16 has no `quantileExactInclusive`);
 * - a Timeline's top series are chosen by a `GLOBAL IN` subquery, which a Distributed
 *   table runs once on the initiating server.
 */
export interface Compiled {
  sql: string;
  /** Read the `JSON` format, whose `totals` hold the grand total row. */
  totals?: boolean;
}

export const newParams = () => new SqlParams(clickHouseBind);

const isColumn = (field: string): field is EventColumn => Object.hasOwn(COLUMN_KINDS, field);

/** A field as a SQL value: its column, or its entry in the `fields` arrays (NULL when absent). */
export function fieldSql(field: string, params: SqlParams): string {
  return isColumn(field) ? quoteIdent(field) : clickHouseFilterDialect.extraField(field, params);
}

/** How ClickHouse orders a search (sql/order-sql.ts). */
export const CLICKHOUSE_ORDER: OrderDialect = { fieldSql, numericTextSql };

/** `FROM … WHERE …`: the time range and the filter. */
export function scanSql(
  table: string,
  filter: SearchPlan['filter'],
  range: TimeWindow,
  params: SqlParams,
): string {
  const f = filter.kind === 'true' ? '' : ` AND (${compileFilter(filter, params)})`;
  return `FROM ${table} WHERE "ts" >= ${params.add(sqlTime(range.fromMs))} AND "ts" < ${params.add(sqlTime(range.toMs))}${f}`;
}

export function searchCountSql(table: string, plan: SearchPlan): Compiled {
  const params = newParams();
  return { sql: `SELECT count() AS n ${scanSql(table, plan.filter, plan.range, params)}` };
}

export function searchRowsSql(table: string, plan: SearchPlan): Compiled {
  const params = newParams();
  const scan = scanSql(table, plan.filter, plan.range, params);
  const order = orderSql(plan.sort, params, CLICKHOUSE_ORDER);
  return {
    sql: `SELECT * ${scan} ORDER BY ${order} LIMIT ${params.add(plan.limit)} OFFSET ${params.add(plan.offset)}`,
  };
}

export function topnSql(table: string, plan: TopNPlan): Compiled {
  const params = newParams();
  const v = fieldSql(plan.field, params);
  const scan = scanSql(table, plan.filter, plan.range, params);
  return {
    sql: `SELECT ${v} AS v, count() AS c ${scan} AND v IS NOT NULL GROUP BY v WITH TOTALS ORDER BY c DESC, v ASC LIMIT ${params.add(plan.n)}`,
    totals: true,
  };
}

export function lastnSql(table: string, plan: LastNPlan): Compiled {
  const params = newParams();
  const v = fieldSql(plan.field, params);
  const scan = scanSql(table, plan.filter, plan.range, params);
  return {
    sql: `SELECT ${v} AS v, max("ts") AS last_seen, min("ts") AS first_seen, count() AS c
      ${scan} AND v IS NOT NULL GROUP BY v ORDER BY last_seen DESC, v ASC LIMIT ${params.add(plan.n)}`,
  };
}

/**
 * A field as numeric metrics read it (duckdb-plans.ts `metricValueSql`): integer columns
 * as doubles, time columns as Unix seconds, text when `parseNumeric` reads a number.
 */
function metricValueSql(field: string, raw: string, params: SqlParams): string {
  if (!isColumn(field)) return numericTextSql(raw, params);
  const kind = COLUMN_KINDS[field];
  switch (kind) {
    case 'integer':
      return `toFloat64(${raw})`;
    case 'time':
      return `(${raw} / 1000)`;
    case 'string':
    case 'ip':
      return numericTextSql(raw, params);
    default:
      return kind satisfies never;
  }
}

/**
 * The q-quantile of the sorted values, interpolated as DuckDB's `quantile_cont`: `def`
 * defines them under the alias `a` (ClickHouse reads an alias anywhere in the SELECT).
 */
export function quantileSql(def: string, a: string, q: number): string {
  const pos = `(${q} * (length(${a}) - 1))`;
  const at = (i: string) => `${a}[toUInt64(${i}) + 1]`;
  return `if(length(${def}) = 0, NULL, ${at(`floor(${pos})`)} + (${pos} - floor(${pos})) * (${at(`ceil(${pos})`)} - ${at(`floor(${pos})`)}))`;
}

const QUANTILES = { p50: 0.5, p90: 0.9, p99: 0.99 } as const;

function metricSql(m: Metric, i: number, params: SqlParams): string {
  if (m.op === 'count') return m.field ? `count(${fieldSql(m.field, params)})` : 'count()';
  const field = m.field ?? 'bytes';
  const raw = fieldSql(field, params);
  // Over no values at all: 0 distinct, and NULL where ClickHouse gives a type's default (0).
  if (m.op === 'count_distinct') return `ifNull(uniqExact(${raw}), 0)`;
  const num = metricValueSql(field, raw, params);
  const orNull = (agg: string) => `if(count(${num}) = 0, NULL, ${agg}(${num}))`;
  switch (m.op) {
    case 'sum':
    case 'avg':
    case 'min':
    case 'max':
      return orNull(m.op);
    case 'p50':
    case 'p90':
    case 'p99':
      return quantileSql(`(arraySort(groupArray(${num})) AS sorted${i})`, `sorted${i}`, QUANTILES[m.op]);
    default:
      return m.op satisfies never;
  }
}

/**
 * Totals and the n largest groups in one pass: `WITH TOTALS` gives the grand total row
 * (over every group, before the LIMIT).
 */
export function summarySql(table: string, plan: SummaryPlan): Compiled {
  const params = newParams();
  const metrics = plan.metrics.map((m, i) => `${metricSql(m, i, params)} AS m${i}`);
  const groups = plan.groupBy.map((f, i) => `${fieldSql(f, params)} AS g${i}`);
  const scan = scanSql(table, plan.filter, plan.range, params);
  const cols = ['count() AS c', ...metrics].join(', ');
  if (!groups.length) return { sql: `SELECT ${cols} ${scan}` };
  const keys = plan.groupBy.map((_, i) => `g${i}`).join(', ');
  return {
    sql: `SELECT ${groups.join(', ')}, ${cols} ${scan} GROUP BY ${keys} WITH TOTALS ORDER BY c DESC, ${keys} LIMIT ${params.add(plan.n)}`,
    totals: true,
  };
}

export function timelineSql(table: string, plan: TimelinePlan): Compiled {
  const params = newParams();
  const interval = params.add(plan.intervalMs);
  const bucket = `intDiv("ts", ${interval}) * ${interval}`;
  const scan = scanSql(table, plan.filter, plan.range, params);
  if (!plan.splitBy) return { sql: `SELECT ${bucket} AS b, count() AS c ${scan} GROUP BY b ORDER BY b` };
  const v = `toString(${fieldSql(plan.splitBy, params)})`;
  const top = `SELECT ${v} AS v ${scan} AND v IS NOT NULL GROUP BY v ORDER BY count() DESC, v LIMIT ${params.add(plan.series)}`;
  return {
    sql: `SELECT ${bucket} AS b, if(${v} GLOBAL IN (${top}), ${v}, NULL) AS s, count() AS c ${scan} GROUP BY b, s ORDER BY b`,
  };
}

export function patternCountsSql(table: string, plan: PatternsPlan): Compiled {
  const params = newParams();
  const from = params.add(plan.range.fromMs);
  const width = params.add(bucketWidth(plan));
  const scan = scanSql(table, plan.filter, plan.range, params);
  const top = `SELECT "pattern_id" AS v ${scanSql(table, plan.filter, plan.range, params)} AND v IS NOT NULL
    GROUP BY v ORDER BY count() DESC, v ASC LIMIT ${params.add(plan.n)}`;
  const total = `SELECT count() ${scanSql(table, plan.filter, plan.range, params)} AND "pattern_id" IS NOT NULL`;
  return {
    sql: `SELECT "pattern_id" AS v, intDiv("ts" - ${from}, ${width}) AS b, count() AS c,
      min("ts") AS first_seen, max("ts") AS last_seen, (${total}) AS total
      ${scan} AND v GLOBAL IN (${top}) GROUP BY v, b`,
  };
}

export function patternSamplesSql(table: string, plan: PatternsPlan, ids: readonly string[]): Compiled {
  const params = newParams();
  const scan = scanSql(table, and(plan.filter, cond('pattern_id', 'in', ids)), plan.range, params);
  return {
    sql: `SELECT "pattern_id" AS v, "ev_id" AS ev_id, "ts" AS ts, "message" AS message ${scan}
      ORDER BY "ts" DESC, "ev_id" DESC LIMIT 3 BY v`,
  };
}

/**
 * `regex` with only its `group`-th capturing group left capturing: ClickHouse 18.16's
 * `extract` returns the first group. The program's regexes capture only with plain `(`
 * (pipes/capture-regex.ts), so the others become `(?:`.
 */
export function onlyGroup(regex: string, group: number): string {
  return rewriteGroups(regex, (g) => (g.index === 0 ? undefined : g.index === group ? '(' : '(?:'));
}

/** What pipes need, in ClickHouse 18.16's words (sql/pipe-sql.ts). */
export const CLICKHOUSE_PIPES: PipeDialect = {
  standardNullLogic: false,
  true: '1',
  false: '0',
  field(name, params) {
    if (isColumn(name) && COLUMN_KINDS[name] === 'time') return `(${quoteIdent(name)} / 1000)`;
    return fieldSql(name, params);
  },
  eventMs: '"ts"',
  double: (x) => `toFloat64(${x})`,
  numericText: (x, params) => numericTextSql(x, params),
  // As JavaScript writes numbers: ClickHouse writes 1e21 as "1e21" and -0 as "-0", an
  // exponent without its sign, and an overflow `inf` (JavaScript `Infinity`).
  numberText: (x) =>
    `multiIf(isInfinite(${x}), if(${x} > 0, 'Infinity', '-Infinity'), isNaN(${x}), 'NaN', ${x} = 0, '0', replaceRegexpOne(toString(${x}), 'e([0-9])', 'e+\\\\1'))`,
  lower: (x) => `lowerUTF8(${x})`,
  upper: (x) => `upperUTF8(${x})`,
  length: (x) => `lengthUTF8(${x})`,
  capture: (x, regex, group, params) =>
    `if(match(${x}, ${params.add(regex)}), extract(${x}, ${params.add(onlyGroup(regex, group))}), NULL)`,
  countAll: 'count()',
  countDistinct: (x) => `ifNull(uniqExact(${x}), 0)`,
  aggregate: (op, x) => `if(count(${x}) = 0, NULL, ${op}(${x}))`,
  quantile: (x, q, n) => quantileSql(`(arraySort(groupArray(${x})) AS sorted${n})`, `sorted${n}`, q),
  topPerGroup: (select, groupBy, partition, orderBy, n) =>
    `${select} GROUP BY ${groupBy} ORDER BY ${orderBy} LIMIT ${n}${partition ? ` BY ${partition}` : ''}`,
  sumCounts: (n) => `sum(${n})`,
  mostCommon: (x, n) => `argMin(assumeNotNull(${x}), tuple(-toInt64(${n}), assumeNotNull(${x})))`,
  withGroup(select, x, from, to, params, n) {
    const array = (v: readonly string[]) => `[${v.map((s) => params.add(s)).join(', ')}]`;
    const v = `assumeNotNull(${x})`;
    return `SELECT *, transform(${v}, ${array(from)}, ${array(to)}, ${v}) AS _pg FROM (${select}) AS r${n}`;
  },
  in: (x, subquery) => `${x} GLOBAL IN (${subquery})`,
  /**
   * In one pass over the aggregated rows (a UNION would read them twice, as 18.16 has no
   * shared subquery): per series, its buckets and values as arrays, then every bucket start
   * by ARRAY JOIN, each value found by its bucket's index (0 where absent).
   */
  fillBuckets(f) {
    const s = f.series;
    const arrays = f.aggs.map((id, i) => `groupArray(${id}) AS _v${f.n}_${i}`).join(', ');
    const found = `indexOf(_b${f.n}, b)`;
    return `SELECT toFloat64(b) / 1000 AS ${f.time}${s ? `, ${s}` : ''}, ${f.aggs
      .map((id, i) => `if(${found} = 0, 0, arrayElement(_v${f.n}_${i}, ${found})) AS ${id}`)
      .join(', ')}
      FROM (SELECT ${s ? `${s}, ` : ''}groupArray(b) AS _b${f.n}, ${arrays} FROM (${f.inner}) AS i${f.n}${s ? ` GROUP BY ${s}` : ''}) AS g${f.n}
      ARRAY JOIN arrayMap(i -> toInt64(${f.from}) + toInt64(i) * toInt64(${f.span}), range(toUInt64(${f.count}))) AS b`;
  },
  floorTo: (x, span) => `(intDiv(toInt64(${x}), toInt64(${span})) * toInt64(${span}))`,
};

export function tableSql(table: string, plan: TablePlan, what: 'rows' | 'count'): Compiled {
  const params = newParams();
  const scan = scanSql(table, plan.filter, plan.range, params);
  return { sql: compilePipes(CLICKHOUSE_PIPES, plan.program, scan, plan.range, params, what) };
}

const HOUR_MS = 3_600_000;

/**
 * The event `evId` names: its ULID's time is its receive time (or, after a clock step
 * back, a little later), so a narrow range on `received_at` skips almost every part.
 */
export function byIdSql(table: string, evId: string, receivedAt: number): Compiled {
  return {
    sql: `SELECT * FROM ${table} WHERE "received_at" BETWEEN ${clickHouseLiteral(receivedAt - HOUR_MS)} AND ${clickHouseLiteral(receivedAt + 1000)} AND "ev_id" = ${clickHouseLiteral(evId)} LIMIT 1`,
  };
}

/** Events per hour of `ts` (the store runtime's estimate). */
export const hourCountsSql = (table: string): Compiled => ({
  sql: `SELECT intDiv("ts", ${HOUR_MS}) AS h, count() AS n FROM ${table} GROUP BY h`,
});

/** The plans as ClickHouse statements on `table` for the shared executor (plan-executor.ts). */
export function clickHousePlans(
  table: string,
): Omit<PlanDialect<Compiled>, 'fieldValues' | 'changeCounts' | 'fieldPresence'> {
  return {
    scoped: scopedPlan,
    searchRows: (plan) => searchRowsSql(table, plan),
    searchCount: (plan) => searchCountSql(table, plan),
    // Its skip indexes are the server's to use: nothing here tells how many events they leave.
    fewMatches: () => false,
    topn: (plan) => topnSql(table, plan),
    lastn: (plan) => lastnSql(table, plan),
    summary: (plan) => summarySql(table, plan),
    timeline: (plan) => timelineSql(table, plan),
    patternCounts: (plan) => patternCountsSql(table, plan),
    patternSamples: (plan, ids) => patternSamplesSql(table, plan, ids),
    tableRows: (plan) => tableSql(table, plan, 'rows'),
    tableCount: (plan) => tableSql(table, plan, 'count'),
    byId: (evId, receivedAt) => byIdSql(table, evId, receivedAt),
    hourCounts: () => hourCountsSql(table),
    event: rowToEvent,
  };
}
