import { examinable } from '../../core/change-score.js';
import { EVENT_COLUMNS } from '../../core/event.js';
import { CHANGE_VALUES, type ChangesPlan } from '../query-plan.js';
import { quoteIdent } from '../sql/sql-params.js';
import { TYPE_KEYS_RE, TYPE_LETTERS_RE, TYPES_RE } from './clickhouse-fields.js';
import { type Compiled, fieldSql, newParams, scanSql } from './clickhouse-plans.js';

/**
 * A changes plan's candidates (plan-executor.ts `changeCounts`) in ClickHouse 18.16's
 * words (no GROUPING SETS, no window functions): each event's pattern and examined values
 * as `(k, v)` pairs (absent ones left out), ARRAY JOINed and counted per window; a field's
 * values cut by `LIMIT … BY` to the `CHANGE_VALUES` most common of the focus and of the
 * baseline, each among the values the window has (a value in both lists comes twice: the
 * executor keeps one). Each window is scanned by its own range.
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
    `SELECT k, v, f, b FROM (SELECT k, v, f, b FROM (${grouped}) WHERE k > 0 AND f > 0 ORDER BY k, f DESC, v LIMIT ${top} BY k)`,
    `SELECT k, v, f, b FROM (SELECT k, v, f, b FROM (${grouped}) WHERE k > 0 AND b > 0 ORDER BY k, b DESC, v LIMIT ${top} BY k)`,
  ];
  return { sql: `SELECT k, v, f, b FROM (${parts.join(' UNION ALL ')})` };
}

/** Columns that may be examined (not times, ids, the message or the pattern). */
const EXAMINED_COLUMNS = EVENT_COLUMNS.filter(examinable);

/**
 * Which fields the focus window's events in scope have (plan-executor.ts `fieldPresence`)
 * in ClickHouse 18.16's words, over the whole window: per examinable column and per key of
 * the `fields` arrays its count of events, for a key also how many hold it as a JSON
 * number (the shape's `t` found as clickhouse-fields.ts finds it); and the window's
 * count, a row of name NULL.
 */
export function fieldPresenceSql(table: string, plan: ChangesPlan): Compiled {
  const params = newParams();
  const scan = scanSql(table, plan.filter, plan.range, params);
  const columns = `[${EXAMINED_COLUMNS.map((c) => params.add(c)).join(', ')}]`;
  const has = `[${EXAMINED_COLUMNS.map((c) => `toUInt8(isNotNull(${quoteIdent(c)}))`).join(', ')}]`;
  const inColumns = `[${EVENT_COLUMNS.map((c) => params.add(c)).join(', ')}]`;
  const keys = `arrayFilter(k -> NOT has(${inColumns}, k), "fields.key")`;
  // A key's JSON type from the shape's `t`, by the key as JSON writes it (a quote or a
  // backslash escaped; one with a control character is not found: text). A column's type
  // is its own: not counted.
  const json = `replaceRegexpAll(name, ${params.add('(["\\\\])')}, ${params.add('\\\\\\1')})`;
  const at = `indexOf(tkeys, ${json})`;
  const number = `i > ncols AND tt != '' AND NOT match(name, ${params.add('[\\x00-\\x1f]')}) AND ${at} > 0 AND arrayElement(tletters, ${at}) = 'n'`;
  const named = `SELECT name, toInt64(count()) AS n, toInt64(countIf(${number})) AS num FROM (
      SELECT extract(ifNull("shape", ''), ${params.add(TYPES_RE)}) AS tt,
        extractAll(tt, ${params.add(TYPE_KEYS_RE)}) AS tkeys, extractAll(tt, ${params.add(TYPE_LETTERS_RE)}) AS tletters,
        arrayFilter((c, h) -> h = 1, ${columns}, ${has}) AS present, ${keys} AS extra,
        arrayConcat(present, extra) AS names, length(present) AS ncols
      ${scan}
    ) ARRAY JOIN names AS name, arrayEnumerate(names) AS i
    GROUP BY name`;
  return {
    sql: `SELECT CAST(NULL AS Nullable(String)) AS name, toInt64(count()) AS n, toInt64(0) AS num ${scan}
      UNION ALL SELECT CAST(name AS Nullable(String)), n, num FROM (${named})`,
  };
}
