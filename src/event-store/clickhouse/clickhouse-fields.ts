import { COLUMN_NAMES, IPV4_RE2, IPV6ISH_RE2, LISTED } from '../fields-shaper.js';
import type { FieldsPlan } from '../query-plan.js';
import { orderSql } from '../sql/order-sql.js';
import { quoteIdent, SqlParams } from '../sql/sql-params.js';
import { clickHouseBind } from './clickhouse-filter-compiler.js';
import { CLICKHOUSE_ORDER, CLICKHOUSE_PIPES, type Compiled, scanSql } from './clickhouse-plans.js';

/**
 * The shape's `t` object (core/record-shape.ts), as ClickHouse 18.16 (no JSON functions)
 * finds it: the first `"t":{…}` holding only `"key":"n|b|j"` entries. A `"t":` key outside
 * a string can only be the shape's own or one inside `v` (values as sent), which holds
 * objects only for a time sent as an array of them; `k` and `p` hold strings.
 */
export const TYPES_RE = '"t":(\\{(?:"(?:[^"\\\\]|\\\\.)*":"[nbj]",?)*\\})';
/** Its keys as JSON writes them, and their types, in the same order. */
export const TYPE_KEYS_RE = '"((?:[^"\\\\]|\\\\.)*)":"[nbj]"';
export const TYPE_LETTERS_RE = '"(?:[^"\\\\]|\\\\.)*":"([nbj])"';
/** A name JSON writes escaped: its type is read in JavaScript (`u`, from the whole `t`). */
const ESCAPED_RE = '["\\\\\\x00-\\x1f]';

/**
 * A Fields plan as one statement in ClickHouse 18.16's words (no WITH tables, no window
 * functions: nested subqueries and arrays), rows as fields-shaper.ts reads them, one a
 * field: the sample by `ts` and `ev_id`, newest first; its values as (field, text) by
 * ARRAY JOIN of the listed columns and the `fields` arrays; each value's tag from the
 * shape's `t` (by the key as JSON writes it; a name JSON escapes is `u`, its `t` sent
 * along); grouped, per field its figures, and a field whose texts each stand for one value
 * cut to its `top` most common (ties kept) through the array of its groups.
 */
export function fieldValuesSql(table: string, plan: FieldsPlan): Compiled {
  const params = new SqlParams(clickHouseBind);
  const scan = scanSql(table, plan.filter, plan.range, params);
  const order = orderSql([{ field: 'ts', desc: true }], params, CLICKHOUSE_ORDER);
  const columnNames = `[${COLUMN_NAMES.map((n) => params.add(n)).join(', ')}]`;
  const text = (c: (typeof LISTED)[number]) =>
    c.tag === 't' ? `toNullable('')` : c.tag === 'i' ? `toString(${quoteIdent(c.name)})` : quoteIdent(c.name);
  const names = `arrayConcat([${LISTED.map((c) => params.add(c.name)).join(', ')}], "fields.key")`;
  const values = `arrayConcat([${LISTED.map(text).join(', ')}], arrayMap(x -> toNullable(x), "fields.value"))`;
  const sources = `arrayConcat([${LISTED.map((c) => `'${c.tag}'`).join(', ')}], arrayMap(k -> if(has(${columnNames}, k), 'x', 'm'), "fields.key"))`;
  const positions = `arrayConcat([${LISTED.map((c) => `toUInt32(${c.pos})`).join(', ')}], arrayMap(i -> toUInt32(i), arrayEnumerate("fields.key")))`;
  const at = `indexOf(tkeys, name)`;
  const tag = `multiIf(src != 'm', src, tt = '', 's', match(name, ${params.add(ESCAPED_RE)}), 'u', ${at} = 0, 's', arrayElement(tletters, ${at}))`;
  const canonical = CLICKHOUSE_PIPES.numberText(`toFloat64OrNull(v)`);
  const ip = `match(v, ${params.add(IPV4_RE2)}) OR (position(v, ':') > 0 AND match(v, ${params.add(IPV6ISH_RE2)}))`;
  const top = params.add(plan.top);
  const sample = `SELECT "ts", "ev_id", "shape", "fields.key", "fields.value", ${LISTED.map((c) => quoteIdent(c.name)).join(', ')}
    ${scan} ORDER BY ${order} LIMIT ${params.add(plan.sample)}`;
  const long = `SELECT o, tt, tkeys, tletters, name, assumeNotNull(vn) AS v0, src, pos FROM (
      SELECT concat(toString("ts" + toInt64(1000000000000000)), "ev_id") AS o,
        extract(ifNull("shape", ''), ${params.add(TYPES_RE)}) AS tt,
        extractAll(tt, ${params.add(TYPE_KEYS_RE)}) AS tkeys, extractAll(tt, ${params.add(TYPE_LETTERS_RE)}) AS tletters,
        ${names} AS names, ${values} AS vals, ${sources} AS srcs, ${positions} AS poss
      FROM (${sample})
    ) ARRAY JOIN names AS name, vals AS vn, srcs AS src, poss AS pos
    WHERE vn IS NOT NULL AND src != 'x'`;
  const groups = `SELECT name, tag, v, t, count() AS c, max(o) AS go, argMax(pos, o) AS gpos FROM (
      SELECT o, name, pos, ${tag} AS tag, if(tag = 'b', if(v0 = 'true', 'true', 'false'), v0) AS v,
        if(tag = 'u', tt, '') AS t
      FROM (${long})
    ) GROUP BY name, tag, v, t`;
  const fields = `SELECT name, groupArray(tuple(tag, v, t, c, go)) AS gs, sum(c) AS fc, max(go) AS fo,
      argMax(gpos, go) AS fpos,
      min(multiIf(tag = 'n', ifNull(${canonical} = v, 0), tag IN ('s', 'i', 'b', 't'), 1, 0)) AS cut,
      sumIf(c, tag IN ('n', 'i')) AS num, sumIf(c, tag = 's' AND (${ip})) AS ip,
      if(cut = 0, toUInt64(0), arrayElement(arrayReverseSort(groupArray(c)), ${top})) AS least
    FROM (${groups}) GROUP BY name`;
  // (A lambda here reads no column but its arguments: 18.16's own limit.)
  return {
    sql: `SELECT name, fc, fo, fpos, cut, num, ip,
      arrayFilter((x, m) -> tupleElement(x, 4) >= m, gs, arrayResize(emptyArrayUInt64(), length(gs), least)) AS vals
    FROM (${fields})`,
  };
}
