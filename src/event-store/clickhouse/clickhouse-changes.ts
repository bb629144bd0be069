import { CHANGE_VALUES, type ChangesPlan } from '../query-plan.js';
import { type Compiled, fieldSql, newParams, scanSql } from './clickhouse-plans.js';

/**
 * A changes plan's candidates (plan-executor.ts `changeCounts`) in ClickHouse 18.16's
 * words (no GROUPING SETS, no window functions): each event's pattern and examined values
 * as `(k, v)` pairs (absent ones left out), ARRAY JOINed and counted per window; a field's
 * values cut by `LIMIT … BY` to the `CHANGE_VALUES` most common of the focus and of the
 * baseline (a value in both lists comes twice: the executor keeps one). Each window is
 * scanned by its own range.
 */
export function changeCountsSql(table: string, plan: ChangesPlan & { fields: string[] }): Compiled {
  const params = newParams();
  const values = ['"pattern_id"', ...plan.fields.map((f) => `toString(${fieldSql(f, params)})`)];
  const pairs = `arrayFilter(x -> NOT isNull(tupleElement(x, 2)), [${values
    .map((v, i) => `tuple(toInt32(${i}), CAST(${v} AS Nullable(String)))`)
    .join(', ')}])`;
  const windows = (select: string) =>
    `SELECT 1 AS in_f, ${select} ${scanSql(table, plan.filter, plan.range, params)}
     UNION ALL SELECT 0 AS in_f, ${select} ${scanSql(table, plan.filter, plan.baseline, params)}`;
  const grouped = `SELECT tupleElement(kv, 1) AS k, assumeNotNull(tupleElement(kv, 2)) AS v,
      toInt64(sum(in_f)) AS f, toInt64(sum(1 - in_f)) AS b
    FROM (${windows(`${pairs} AS kvs`)}) ARRAY JOIN kvs AS kv GROUP BY k, v`;
  const top = params.add(CHANGE_VALUES);
  const parts = [
    `SELECT toInt32(-1) AS k, '' AS v, toInt64((SELECT count() ${scanSql(table, plan.filter, plan.range, params)})) AS f,
      toInt64((SELECT count() ${scanSql(table, plan.filter, plan.baseline, params)})) AS b`,
    `SELECT k, v, f, b FROM (${grouped}) WHERE k = 0`,
    `SELECT k, v, f, b FROM (SELECT k, v, f, b FROM (${grouped}) WHERE k > 0 ORDER BY k, f DESC, v LIMIT ${top} BY k)`,
    `SELECT k, v, f, b FROM (SELECT k, v, f, b FROM (${grouped}) WHERE k > 0 ORDER BY k, b DESC, v LIMIT ${top} BY k)`,
  ];
  return { sql: `SELECT k, v, f, b FROM (${parts.join(' UNION ALL ')})` };
}
