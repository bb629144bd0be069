/**
 * How events sort (Search `sort`, live tails): THE order, which the stores reproduce
 * (event-store/sql/order-sql.ts `orderSql`; a property test compares them).
 *
 * Each sort term orders by its field's values; a missing value (absent, null) sorts last
 * in both directions. By field:
 * - time and integer columns: numerically.
 * - `severity`: by syslog rank, debug < info < notice < warning < error < critical <
 *   alert < emergency (filter/ast.ts `severityRank`); a stored value that is no
 *   severity sorts as missing.
 * - other columns (host, message, IP columns, ...): by Unicode code point (UTF-8 byte
 *   order, the stores' binary string order).
 * - every other field (text in `fields`): a value `parseNumeric` accepts is a number.
 *   Numbers come first, in numeric order, then the other values by code point; numbers
 *   equal in value (`1`, `1.0`) by code point. Descending reverses the order inside each
 *   group but keeps numbers before text (and missing values last).
 * Ties go to the next term, and finally to `ev_id` in the first term's direction
 * (descending when there is no term), so the order is total and pages never overlap.
 */
import { COLUMN_KINDS, type EventColumn } from '../core/event.js';
import { parseNumeric, SEVERITY_FIELD, severityRank } from './ast.js';
import { compareCodePoints, type EventLike } from './evaluate.js';

/** One sort key of a search: a column or field name, descending or not. */
export interface SortTerm {
  field: string;
  desc: boolean;
}

/** How a field's values are ordered (see the header). */
export type SortKind = 'number' | 'severity' | 'text' | 'mixed';

export function sortKind(field: string): SortKind {
  if (field === SEVERITY_FIELD) return 'severity';
  if (!Object.hasOwn(COLUMN_KINDS, field)) return 'mixed';
  const kind = COLUMN_KINDS[field as EventColumn];
  return kind === 'time' || kind === 'integer' ? 'number' : 'text';
}

type Read = (e: EventLike) => string | number | null | undefined;

function reader(field: string): Read {
  if (Object.hasOwn(COLUMN_KINDS, field)) {
    const column = field as EventColumn;
    return (e) => e[column];
  }
  return (e) => (e.fields !== undefined && Object.hasOwn(e.fields, field) ? e.fields[field] : undefined);
}

const compareNumbers = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

/** Compares two present values in the term's direction. */
type Compare = (a: string | number, b: string | number, desc: boolean) => number;

/** `c` in the term's direction. */
const dir = (c: number, desc: boolean) => (desc ? -c : c);

const COMPARE: Readonly<Record<Exclude<SortKind, 'severity'>, Compare>> = {
  number: (a, b, desc) => dir(compareNumbers(Number(a), Number(b)), desc),
  text: (a, b, desc) => dir(compareCodePoints(String(a), String(b)), desc),
  mixed: (a, b, desc) => {
    const x = parseNumeric(String(a));
    const y = parseNumeric(String(b));
    if (x !== undefined && y === undefined) return -1;
    if (x === undefined && y !== undefined) return 1;
    const byNumber = x !== undefined && y !== undefined ? compareNumbers(x, y) : 0;
    return dir(byNumber || compareCodePoints(String(a), String(b)), desc);
  },
};

type Comparator = (a: EventLike, b: EventLike) => number;

function termComparator({ field, desc }: SortTerm): Comparator {
  const read = reader(field);
  const kind = sortKind(field);
  // A severity sorts as its rank: a number.
  const value: Read = kind === 'severity' ? (e) => severityRank(read(e)) : read;
  const compare = COMPARE[kind === 'severity' ? 'number' : kind];
  return (a, b) => {
    const x = value(a);
    const y = value(b);
    const xMissing = x === null || x === undefined;
    const yMissing = y === null || y === undefined;
    if (xMissing || yMissing) return xMissing === yMissing ? 0 : xMissing ? 1 : -1;
    return compare(x, y, desc);
  };
}

/** The terms a store sorts by: the given ones, then `ev_id` in the first one's direction. */
export const withTieBreak = (sort: readonly SortTerm[]): SortTerm[] => [
  ...sort,
  { field: 'ev_id', desc: sort[0]?.desc ?? true },
];

/** A comparator for `Array.prototype.sort` giving the order described in the header. */
export function eventComparator(sort: readonly SortTerm[]): Comparator {
  const terms = withTieBreak(sort).map(termComparator);
  return (a, b) => {
    for (const t of terms) {
      const c = t(a, b);
      if (c !== 0) return c;
    }
    return 0;
  };
}

/** `-ts`, the default order: newest first. */
export const newestFirst: Comparator = eventComparator([{ field: 'ts', desc: true }]);
