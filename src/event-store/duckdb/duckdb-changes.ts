import { CHANGE_VALUES, type ChangesPlan } from '../query-plan.js';
import { SqlParams } from '../sql/sql-params.js';
import { type Compiled, groupSql, type Narrowing, scanSql } from './duckdb-plans.js';

/**
 * A changes plan's candidates (plan-executor.ts `changeCounts`) in one statement: the
 * focus and the baseline window each scanned by its own range (each pruned by its `ts`
 * zone maps and narrowed by its own reach) and read once, every event's pattern and
 * examined values counted per key, per window by a FILTER; a field's values cut to the
 * `CHANGE_VALUES` most common of either window (`min_by` of their counts and text).
 */
export function changeCountsSql(
  plan: ChangesPlan & { fields: string[] },
  focus: Narrowing,
  baseline: Narrowing,
): Compiled {
  const params = new SqlParams(undefined, focus.columnOf);
  const columns = plan.fields.map((f, i) => `CAST(${groupSql(f, params)} AS VARCHAR) AS c${i}`);
  const keys = ['pattern_id', ...plan.fields.map((_, i) => `c${i}`)];
  const select = ['pattern_id', ...columns].join(', ');
  const scans = [
    `SELECT true AS in_f, ${select} ${scanSql(plan.filter, plan.range, params, focus)}`,
    `SELECT false AS in_f, ${select} ${scanSql(plan.filter, plan.baseline, params, baseline)}`,
  ];
  const top = params.add(CHANGE_VALUES);
  // One GROUP BY a key over the windows' rows read once (measured 2.5× faster than the same
  // counts by GROUPING SETS over 1 M events and 11 fields), then each field's values cut
  // to the most common of either window (ties by value text) by a top-n aggregate.
  const counts = (key: string, i: number) =>
    `SELECT ${i} AS k, ${key} AS v, count(*) FILTER (WHERE in_f) AS f, count(*) FILTER (WHERE NOT in_f) AS b
     FROM base WHERE ${key} IS NOT NULL GROUP BY ${key}`;
  const sql = `WITH base AS MATERIALIZED (${scans.join(' UNION ALL ')}),
    g AS MATERIALIZED (${keys.map(counts).join(' UNION ALL ')}),
    kept AS (
      SELECT k, unnest(list_distinct(list_concat(min_by(v, (-f, v), ${top}), min_by(v, (-b, v), ${top})))) AS v
      FROM g WHERE k > 0 GROUP BY k
    )
    SELECT -1 AS k, NULL AS v, count(*) FILTER (WHERE in_f) AS f, count(*) FILTER (WHERE NOT in_f) AS b FROM base
    UNION ALL SELECT k, v, f, b FROM g WHERE k = 0
    UNION ALL SELECT k, v, f, b FROM g SEMI JOIN kept USING (k, v)`;
  return { sql, params };
}
