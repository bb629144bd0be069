import { COLUMN_NAMES, IPV4_RE2, IPV6ISH_RE2, LISTED } from '../fields-shaper.js';
import type { FieldsPlan } from '../query-plan.js';
import { orderSql } from '../sql/order-sql.js';
import { quoteIdent, SqlParams } from '../sql/sql-params.js';
import { type Compiled, DUCKDB_ORDER, DUCKDB_PIPES, type Narrowing, scanSql } from './duckdb-plans.js';

/**
 * A sample of at most this many times its size's events is read in one statement (a top-n
 * carrying every column costs little there); a larger one by its keys first.
 */
const ONE_STATEMENT_EVENTS = 2;

/**
 * A Fields plan as one statement (rows as fields-shaper.ts reads them, one a field): the
 * sample; its values as (field, tag, text), each map entry's tag from the record's types
 * (the shape's `t`, read as a map); grouped; per field its figures; and a field whose texts
 * each stand for one value cut to its `top` most common (ties kept), so a field of 10,000
 * distinct values costs a row a value at most `top` times. Extra fields in columns of their
 * own (field-columns.ts) are read from them. `inRange`: about how many events the range
 * holds, which decides how the sample is read.
 */
export function fieldValuesSql(plan: FieldsPlan, narrowing: Narrowing = {}, inRange = Infinity): Compiled {
  const params = new SqlParams(undefined, narrowing.columnOf);
  const extras = (narrowing.extraColumns ?? []).filter(([, field]) => !COLUMN_NAMES.includes(field));
  const kept = [...LISTED.map((c) => quoteIdent(c.name)), ...extras.map(([column]) => quoteIdent(column))];
  const types = `CASE WHEN json_valid(shape) THEN TRY_CAST(json_extract(shape, '$.t') AS MAP(VARCHAR, VARCHAR)) END`;
  const order = orderSql([{ field: 'ts', desc: true }], params, DUCKDB_ORDER);
  const limit = params.add(plan.sample);
  // Each event with its place in the sample, the newer the larger (the shaper's `o`).
  const place = (ts: string, id: string) =>
    `CAST(-row_number() OVER (ORDER BY ${ts} DESC, ${id} DESC) AS INTEGER)`;
  const sample =
    inRange <= plan.sample * ONE_STATEMENT_EVENTS
      ? // The place is the order: one sort (an ORDER BY … LIMIT and then the place sorted twice).
        `SELECT ${place('ts', 'ev_id')} AS o, ${types} AS tm, fields, ${kept.join(', ')}
          ${scanSql(plan.filter, plan.range, params, narrowing)} QUALIFY o >= -${limit}`
      : // By its keys first, then its rows within their time span: a sort of every match
        // carrying every column was most of the time over a day (as for a Search's page, ADR 0019).
        `SELECT o, ${types} AS tm, fields, ${kept.join(', ')} FROM (
          SELECT kts, kid, ${place('kts', 'kid')} AS o FROM (
            SELECT ts AS kts, ev_id AS kid ${scanSql(plan.filter, plan.range, params, narrowing)}
            ORDER BY ${order} LIMIT ${limit})
        ) AS k JOIN (
          SELECT ev_id, shape, fields, ${kept.join(', ')} ${scanSql(plan.filter, plan.range, params, narrowing)}
        ) AS e ON e.ts = k.kts AND e.ev_id = k.kid`;
  // The record's JSON type of an extra field: its entry in `t`.
  const tagOf = (name: string) => {
    const type = `map_extract_value(tm, ${name})`;
    return `CASE WHEN ${type} IN ('n', 'b', 'j') THEN ${type} ELSE 's' END`;
  };
  // The columns (and extra fields' own) in one pass over the sample, as lists unnested
  // side by side: a branch each read the sample, its map too, as many times.
  const listed = [
    ...LISTED.map((c) => {
      const id = quoteIdent(c.name);
      const v =
        c.tag === 't'
          ? `''`
          : c.type === 'int64'
            ? `CAST(CAST(${id} AS DOUBLE) AS VARCHAR)`
            : `CAST(${id} AS VARCHAR)`;
      return { name: params.add(c.name), tag: `'${c.tag}'`, v, pos: c.pos };
    }),
    ...extras.map(([column, field], i) => ({
      name: params.add(field),
      tag: `'m'`,
      v: quoteIdent(column),
      pos: 1_000_000 + i,
    })),
  ];
  const unnested = (key: 'name' | 'tag' | 'v' | 'pos') => `unnest([${listed.map((l) => l[key]).join(', ')}])`;
  const columns = `SELECT o, name, CASE WHEN tag = 'm' THEN ${tagOf('name')} ELSE tag END AS tag, v, pos FROM (
      SELECT o, tm, ${unnested('name')} AS name, ${unnested('tag')} AS tag, ${unnested('v')} AS v, ${unnested('pos')} AS pos
      FROM s
    ) WHERE v IS NOT NULL`;
  const notColumn = COLUMN_NAMES.map((n) => params.add(n)).join(', ');
  const mapped = `SELECT o, k AS name, ${tagOf('k')} AS tag, v, p AS pos FROM (
      SELECT o, tm, unnest(map_keys(fields)) AS k, unnest(map_values(fields)) AS v,
        unnest(range(1, CAST(cardinality(fields) AS BIGINT) + 1)) AS p FROM s
    ) WHERE k NOT IN (${notColumn})`;
  const canonical = DUCKDB_PIPES.numberText('TRY_CAST(v AS DOUBLE)');
  const ip = `regexp_matches(v, ${params.add(IPV4_RE2)}) OR (contains(v, ':') AND regexp_matches(v, ${params.add(IPV6ISH_RE2)}))`;
  const top = params.add(plan.top);
  // g: a boolean's text as the value it is read as (only 'true' is true), one group each.
  // least: the count a field's top values reach down to, the largest count that many of
  // its values reach (from its counts' counts, a few rows a field).
  const sql = `WITH s AS MATERIALIZED (${sample}),
    g AS (
      SELECT name, tag, CASE WHEN tag = 'b' THEN (CASE WHEN v = 'true' THEN 'true' ELSE 'false' END) ELSE v END AS v,
        count(*) AS c, max(o) AS o, arg_max(pos, o) AS pos
      FROM (${mapped} UNION ALL ${columns}) GROUP BY ALL
    ),
    f AS (
      SELECT name, sum(c) AS fc, max(o) AS fo, arg_max(pos, o) AS fpos,
        bool_and(CASE WHEN tag = 'n' THEN coalesce(${canonical} = v, false) ELSE tag IN ('s', 'i', 'b', 't') END) AS cut,
        coalesce(sum(c) FILTER (WHERE tag IN ('n', 'i')), 0) AS num,
        coalesce(sum(c) FILTER (WHERE tag = 's' AND (${ip})), 0) AS ip,
        list({'tag': tag, 'v': v, 'c': c, 'o': o}) AS vals
      FROM g GROUP BY name
    ),
    least AS (
      SELECT name, max(c) AS least FROM (
        SELECT name, c, sum(n) OVER (PARTITION BY name ORDER BY c DESC) AS reached
        FROM (SELECT name, c, count(*) AS n FROM g GROUP BY name, c)
      ) WHERE reached >= ${top} GROUP BY name
    )
    SELECT name, fc, fo, fpos, CAST(cut AS INTEGER) AS cut, num, ip,
      to_json(CASE WHEN cut AND least IS NOT NULL THEN list_filter(vals, lambda x: x.c >= least) ELSE vals END) AS vals
    FROM f LEFT JOIN least USING (name)`;
  return { sql, params };
}
