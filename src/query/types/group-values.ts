import { COLUMN_KINDS, type EventColumn } from '../../core/event.js';
import { parseNumeric } from '../../filter/ast.js';
import { compareCodePoints, type EventLike, fieldValue } from '../../filter/evaluate.js';

type GroupValue = string | number | null;

/**
 * Ties between equal counts in the order the stores break them (`ORDER BY …, v ASC`):
 * numbers by value, text by code point, missing values last.
 */
export function compareGroupValues(a: GroupValue, b: GroupValue): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return compareCodePoints(String(a), String(b));
}

/**
 * A field as numeric metrics read it (the stores' rule): integer columns as they are,
 * time columns as Unix seconds, text when it reads as a number; otherwise null.
 */
export function metricValue(e: EventLike, field: string): number | null {
  const v = fieldValue(e, field);
  if (v === null || v === undefined) return null;
  const kind = Object.hasOwn(COLUMN_KINDS, field) ? COLUMN_KINDS[field as EventColumn] : 'string';
  if (kind === 'time') return typeof v === 'number' ? v / 1000 : null;
  if (typeof v === 'number') return v;
  return parseNumeric(v) ?? null;
}
