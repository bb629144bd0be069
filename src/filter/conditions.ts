/**
 * Checks one condition (field, operator, value) and builds its AST node. Both front ends
 * use it (JSON filters and the query language), so a condition is accepted by one
 * exactly when the other accepts it.
 */
import { COLUMN_KINDS, type EventColumn, type FieldKind } from '../core/event.js';
import {
  type CondNode,
  cond,
  FILTER_LIMITS,
  FILTER_OPS,
  type FilterOp,
  parseCidr,
  parseNumeric,
  parseSeverityValue,
  type RangeValue,
  type Scalar,
  SEVERITY_FIELD,
  SEVERITY_ORDER,
  toTimeMs,
} from './ast.js';
import { checkRegex } from './regex.js';

export const MAX_FIELD_LENGTH = 256;
const FIELD_NAME = /^[\p{L}\p{N}_.@-]+$/u;

/** The kind a field compares as: its column's kind, `string` for every other field. */
export function fieldKind(field: string): FieldKind {
  return Object.hasOwn(COLUMN_KINDS, field) ? COLUMN_KINDS[field as EventColumn] : 'string';
}

export const isFilterOp = (op: unknown): op is FilterOp =>
  typeof op === 'string' && (FILTER_OPS as readonly string[]).includes(op);

/** Why `field` is not an acceptable field name, or `undefined`. Unknown names are fine. */
export function checkFieldName(field: unknown): string | undefined {
  if (typeof field !== 'string') return 'must be a string';
  if (field === '') return 'must not be empty';
  if (field.length > MAX_FIELD_LENGTH) return `must be at most ${MAX_FIELD_LENGTH} characters long`;
  if (!FIELD_NAME.test(field)) return 'may contain only letters, digits, "_", ".", "-" and "@"';
  return undefined;
}

/** A built condition, or why not; `at` locates the problem inside the value (`[1]`). */
export type ConditionResult =
  | { readonly ok: true; readonly node: CondNode }
  | { readonly ok: false; readonly message: string; readonly at?: string };

const fail = (message: string, at?: string): ConditionResult =>
  at === undefined ? { ok: false, message } : { ok: false, message, at };
const ok = (node: CondNode): ConditionResult => ({ ok: true, node });

const isScalar = (v: unknown): v is Scalar =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

function scalarProblem(value: unknown): string {
  if (value === null) return 'null is not a value; use "exists" or "not_exists" to test for a missing field';
  if (Array.isArray(value)) return 'must be a string, number or boolean (use "in" for a list of values)';
  if (typeof value === 'number') return 'must be a finite number';
  return 'must be a string, number or boolean';
}

/** Why an ordered value (relational bound) does not suit the field's kind. */
function orderedProblem(field: string, kind: FieldKind, value: string | number): string | undefined {
  switch (kind) {
    case 'integer':
      return parseNumeric(value) === undefined
        ? `"${field}" is an integer field: the value must be a number or a numeric string`
        : undefined;
    case 'time':
      return toTimeMs(value) === undefined
        ? `"${field}" is a time field: the value must be Unix seconds or an ISO 8601 date-time`
        : undefined;
    case 'string':
    case 'ip':
      return field === SEVERITY_FIELD && parseSeverityValue(value) === undefined
        ? `"${field}" compares by rank: the value must be a severity (${SEVERITY_ORDER.join(', ')}; an alias such as err, warn or crit; or a syslog code 0-7)`
        : undefined;
    default:
      return kind satisfies never;
  }
}

function checkOrdered(field: string, kind: FieldKind, value: unknown): string | undefined {
  if (value === undefined) return 'a value is required';
  if (typeof value === 'number' && !Number.isFinite(value)) return 'must be a finite number';
  if (typeof value !== 'number' && typeof value !== 'string') return 'must be a number or a string';
  return orderedProblem(field, kind, value);
}

/**
 * Checks `value` against `op` and the field's kind and builds the condition. The field
 * name is assumed checked (see `checkFieldName`).
 */
export function buildCondition(field: string, op: FilterOp, value: unknown): ConditionResult {
  const kind = fieldKind(field);
  switch (op) {
    case 'exists':
    case 'not_exists':
      return value === undefined || value === null ? ok(cond(field, op)) : fail(`"${op}" takes no value`);
    case 'eq':
    case 'ne':
      if (value === undefined) return fail('a value is required');
      return isScalar(value) ? ok(cond(field, op, value)) : fail(scalarProblem(value));
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const problem = checkOrdered(field, kind, value);
      return problem === undefined ? ok(cond(field, op, value as string | number)) : fail(problem);
    }
    case 'in':
    case 'not_in': {
      if (!Array.isArray(value)) return fail('must be a non-empty array of strings, numbers or booleans');
      if (value.length === 0) return fail('must not be empty');
      if (value.length > FILTER_LIMITS.maxNodes) {
        return fail(`must have at most ${FILTER_LIMITS.maxNodes} values`);
      }
      const bad = value.findIndex((v) => !isScalar(v));
      if (bad !== -1) return fail(scalarProblem(value[bad]), `[${bad}]`);
      return ok(cond(field, op, value as Scalar[]));
    }
    case 'between': {
      if (!Array.isArray(value) || value.length !== 2) {
        return fail('must be an array of two bounds, [low, high] (both inclusive)');
      }
      const [lo, hi] = value as [unknown, unknown];
      const bothNumbers = typeof lo === 'number' && typeof hi === 'number';
      const bothStrings = typeof lo === 'string' && typeof hi === 'string';
      if (!bothNumbers && !bothStrings) return fail('the bounds must be two numbers or two strings');
      for (const [i, bound] of [lo, hi].entries()) {
        const problem = checkOrdered(field, kind, bound);
        if (problem !== undefined) return fail(problem, `[${i}]`);
      }
      return ok(cond(field, op, [lo, hi] as unknown as RangeValue));
    }
    case 'contains':
    case 'not_contains':
    case 'startswith':
    case 'endswith':
    case 'regex':
    case 'cidr': {
      if (typeof value !== 'string')
        return fail(value === undefined ? 'a value is required' : 'must be a string');
      if (op === 'cidr') {
        if (kind === 'integer' || kind === 'time') return fail(`"${field}" is not an IP address field`);
        if (parseCidr(value) === undefined) {
          return fail('must be an IPv4 or IPv6 CIDR block such as 10.0.0.0/8 or 2001:db8::/32');
        }
        return ok(cond(field, op, value));
      }
      if (kind === 'time')
        return fail(`"${field}" is a time field: "${op}" applies to text, use gt/lt/between`);
      if (op === 'regex') {
        const problem = checkRegex(value);
        if (problem !== undefined) return fail(problem);
      }
      return ok(cond(field, op, value));
    }
    default:
      return op satisfies never;
  }
}
