import { SEVERITY_ORDER } from '../../filter/ast.js';
import { type SortKind, sortKind, withTieBreak } from '../../filter/sort.js';
import type { SortTerm } from '../query-plan.js';
import type { SqlParams } from './sql-params.js';

/** What a store's ORDER BY needs from its dialect: a field as SQL, and its numeric reading. */
export interface OrderDialect {
  fieldSql(field: string, params: SqlParams): string;
  numericTextSql(x: string, params: SqlParams): string;
}

/** ORDER BY keys of one sort term, in the order filter/sort.ts defines. */
function sortKeys(term: SortTerm, params: SqlParams, d: OrderDialect): string[] {
  const v = d.fieldSql(term.field, params);
  const dir = term.desc ? 'DESC' : 'ASC';
  const kind: SortKind = sortKind(term.field);
  switch (kind) {
    case 'number':
    case 'text':
      // Text sorts bytewise in both engines, which for UTF-8 is code point order.
      return [`${v} ${dir} NULLS LAST`];
    case 'severity': {
      // The searched form: ClickHouse's `CASE x WHEN` gives 0, not NULL, for a NULL x.
      const ranks = SEVERITY_ORDER.map((s, i) => `WHEN ${v} = ${params.add(s)} THEN ${i}`).join(' ');
      return [`(CASE ${ranks} END) ${dir} NULLS LAST`];
    }
    case 'mixed': {
      // Numbers (group 0) before text (1) in both directions, missing values (2) last.
      const num = d.numericTextSql(v, params);
      return [
        `(CASE WHEN ${v} IS NULL THEN 2 WHEN ${num} IS NOT NULL THEN 0 ELSE 1 END) ASC`,
        `${num} ${dir} NULLS LAST`,
        `${v} ${dir} NULLS LAST`,
      ];
    }
    default:
      return kind satisfies never;
  }
}

/** The ORDER BY list of a search: its terms, then `ev_id` (filter/sort.ts). */
export function orderSql(sort: readonly SortTerm[], params: SqlParams, d: OrderDialect): string {
  return withTieBreak(sort)
    .flatMap((term) => sortKeys(term, params, d))
    .join(', ');
}
