/**
 * The one filter AST: the JSON `filter` conditions and
 * the query-language string both become this, and every backend (the JavaScript
 * evaluator for triggers, the DuckDB and ClickHouse compilers) consumes it. Nodes are
 * immutable: built only by the constructors in builders.ts, which freeze them and keep
 * them in a simplified normal form (flat and/or, no `true` inside `and`, no double
 * negation).
 *
 * This module is the package's front door: the node types and operator tables are
 * declared here, and it re-exports the builders (builders.ts), the value coercions
 * (values.ts) and the severity order (severity.ts). The printer back to the query language
 * is the syntax layer's (src/syntax/explain.ts): it speaks the grammar.
 */

export type Scalar = string | number | boolean;

export const FILTER_OPS = [
  'eq',
  'ne',
  'in',
  'not_in',
  'contains',
  'not_contains',
  'startswith',
  'endswith',
  'regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'between',
  'exists',
  'not_exists',
  'cidr',
] as const;

export type FilterOp = (typeof FILTER_OPS)[number];

/**
 * The shape of the value each operator takes. Relational operators take a number or a
 * string (never a boolean: an ordering of booleans means nothing to a user).
 */
export const OP_VALUE_SHAPE = {
  eq: 'scalar',
  ne: 'scalar',
  in: 'list',
  not_in: 'list',
  contains: 'string',
  not_contains: 'string',
  startswith: 'string',
  endswith: 'string',
  regex: 'string',
  gt: 'ordered',
  gte: 'ordered',
  lt: 'ordered',
  lte: 'ordered',
  between: 'range',
  exists: 'none',
  not_exists: 'none',
  cidr: 'string',
} as const satisfies Record<FilterOp, ValueShape>;

export type ValueShape = 'scalar' | 'ordered' | 'list' | 'range' | 'string' | 'none';

/** Inclusive bounds of `between`: both numbers or both strings. */
export type RangeValue = readonly [number, number] | readonly [string, string];

interface ShapeTypes {
  scalar: Scalar;
  ordered: string | number;
  list: readonly Scalar[];
  range: RangeValue;
  string: string;
  none: undefined;
}

/** The value type an operator takes (`undefined` for `exists` / `not_exists`). */
export type OpValue<Op extends FilterOp> = ShapeTypes[(typeof OP_VALUE_SHAPE)[Op]];

/** The condition node of one operator. */
export type CondFor<Op extends FilterOp> =
  OpValue<Op> extends undefined
    ? { readonly kind: 'cond'; readonly field: string; readonly op: Op }
    : { readonly kind: 'cond'; readonly field: string; readonly op: Op; readonly value: OpValue<Op> };

/** One comparison of a field against a value; `value` is typed by `op`. */
export type CondNode = { [Op in FilterOp]: CondFor<Op> }[FilterOp];

export interface AndNode {
  readonly kind: 'and';
  readonly items: readonly FilterNode[];
}

export interface OrNode {
  readonly kind: 'or';
  readonly items: readonly FilterNode[];
}

export interface NotNode {
  readonly kind: 'not';
  readonly item: FilterNode;
}

/** A bare word or quoted phrase: a case-insensitive substring of `message`. */
export interface TextNode {
  readonly kind: 'text';
  readonly value: string;
  /** Written as a quoted phrase; matching is the same, only rendering differs. */
  readonly phrase?: boolean;
}

/** The empty filter: matches every event. */
export interface TrueNode {
  readonly kind: 'true';
}

export type FilterNode = AndNode | OrNode | NotNode | CondNode | TextNode | TrueNode;

/** Limits shared by both front ends, so a filter that passes one passes the other. */
export const FILTER_LIMITS = Object.freeze({
  /** Nodes on the longest path from the root (a flat list of conditions is 2). */
  maxDepth: 16,
  /** Conditions, groups and `in`/`not_in` list values together. */
  maxNodes: 1000,
});

export {
  and,
  cond,
  measure,
  NEGATED_OP,
  not,
  or,
  simplify,
  TRUE,
  text,
} from './builders.js';
export {
  lowerCond,
  NOTHING,
  parseSeverityValue,
  SEVERITY_FIELD,
  SEVERITY_ORDER,
  severityRank,
} from './severity.js';
export { type Cidr, parseCidr, parseNumeric, scalarToString, toTimeMs } from './values.js';
