import { Type } from 'typebox';
import type { TableResult } from '../../event-store/query-plan.js';
import { MAX_TABLE_ROWS } from '../../pipes/program.js';
import { parseTableQuery } from '../../syntax/parse-query.js';
import { type CommonParamValues, type QueryTypeDef, withCommon } from './query-type.js';

const Cell = Type.Union([Type.String(), Type.Number(), Type.Null()]);

/**
 * Table (docs/query-language.md#table): the query's pipes (`| stats …`, `| where …`, …) run in the event store
 * over the matching events. Without an aggregating pipe its rows are events, with the
 * columns `fields` names or ts, host, app, severity, message and the columns pipes made.
 */
export const Table: QueryTypeDef<CommonParamValues, TableResult> = {
  name: 'Table',
  description: `The rows the query's pipes make (stats, top, timechart, patterns, fields, sort, limit, where, extract, rex, rename, eval), computed in the event store; without pipes, matching events as rows. At most ${MAX_TABLE_ROWS.toLocaleString('en-US')} rows.`,
  params: withCommon({}),
  results: Type.Object({
    columns: Type.Array(
      Type.Object({
        name: Type.String(),
        type: Type.Union([
          Type.Literal('string'),
          Type.Literal('number'),
          Type.Literal('time'),
          Type.Literal('ip'),
        ]),
      }),
    ),
    rows: Type.Array(Type.Array(Cell), { description: 'Cells in column order; times in Unix seconds.' }),
    total_rows: Type.Integer({ description: 'Rows the pipes made, before the cut at 10,000.' }),
    truncated: Type.Boolean({ description: 'Whether rows were left out (total_rows > rows).' }),
  }),
  plan: (p, filter, range) => ({ kind: 'table', filter, range, program: parseTableQuery(p.query).program }),
  // Events in their natural order come newest first slice by slice (partial results);
  // anything that aggregates, sorts or cuts needs every row at once.
  slicing: (p) => (parseTableQuery(p.query).program.sliceable ? 'newest-first' : null),
  merge: (acc, part) => ({
    columns: part.columns,
    rows: [...acc.rows, ...part.rows].slice(0, MAX_TABLE_ROWS),
    totalRows: acc.totalRows + part.totalRows,
  }),
  present: (r) => ({
    columns: r.columns,
    rows: r.rows,
    total_rows: r.totalRows,
    truncated: r.totalRows > r.rows.length,
  }),
};
