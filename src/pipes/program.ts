/**
 * Pipes (docs/query-language.md#pipes): the pieces the parser reads after the filter part of
 * a query (names with their positions, expressions, conditions, aggregates; each pipe's
 * arguments are in its entry of pipe-table.ts), and the resolved program every evaluator
 * runs (`Program`): the SQL compiler of each event store (event-store/sql/pipe-sql.ts) and
 * the JavaScript evaluator (run.ts) take the same stages with the same types, so they
 * cannot disagree on what a name means, how a value converts or how rows are ordered.
 */
import { AGG_OPS, EVAL_FUNCTIONS, PIPE_NAMES } from '../shared/pipe-names.js';

export { AGG_OPS, EVAL_FUNCTIONS, PIPE_NAMES };

export type AggOp = (typeof AGG_OPS)[number];

export const QUANTILES: Readonly<Record<string, number>> = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };

export type EvalFunction = (typeof EVAL_FUNCTIONS)[number];

/** Most rows a table holds, and the largest `limit`, `top` or `patterns` count. */
export const MAX_TABLE_ROWS = 10_000;
/** Most buckets a `timechart` may make. */
export const MAX_TIMECHART_BUCKETS = 50_000;
/** Series a `timechart … by` keeps by name; the rest are `other` (as Timeline). */
export const TIMECHART_SERIES = 5;
/**
 * Most levels a pipe's expression or condition nests: each operator, unary minus, NOT,
 * AND/OR group and function call is one (a sum of n terms is n - 1). The parser refuses
 * deeper ones as it builds them, so nothing after it (the resolver, the evaluator, the
 * SQL compiler, the engines' parsers, whose own limits are about 1,000) recurses deeper.
 */
export const MAX_EXPRESSION_DEPTH = 64;

// --- What the parser produces ---------------------------------------------------------

/** A column name where it was written (0-based offset in the whole query). */
export interface Name {
  readonly name: string;
  readonly at: number;
}

export type ParsedExpr =
  | { readonly k: 'num'; readonly v: number }
  | { readonly k: 'str'; readonly v: string }
  | { readonly k: 'col'; readonly col: Name }
  | { readonly k: 'neg'; readonly e: ParsedExpr }
  | { readonly k: 'arith'; readonly op: ArithOp; readonly a: ParsedExpr; readonly b: ParsedExpr }
  | {
      readonly k: 'fn';
      readonly fn: EvalFunction;
      readonly args: readonly ParsedExpr[];
      readonly at: number;
    };

export type ArithOp = '+' | '-' | '*' | '/';
export type CmpOp = '=' | '!=' | '>' | '>=' | '<' | '<=';

export type ParsedCond =
  | { readonly k: 'cmp'; readonly col: Name; readonly op: CmpOp; readonly v: number | string }
  | { readonly k: 'and' | 'or'; readonly items: readonly ParsedCond[] }
  | { readonly k: 'not'; readonly c: ParsedCond };

export interface ParsedAgg {
  readonly op: AggOp;
  readonly field?: Name;
  readonly as?: Name;
  readonly at: number;
}

// --- The resolved program -------------------------------------------------------------

export type ColType = 'string' | 'number' | 'time' | 'ip';

/** An event's field (before any aggregation) or a column the program made (`_c1`, …). */
export type Ref = { readonly field: string } | { readonly col: string };

export type Expr =
  | { readonly k: 'num'; readonly v: number }
  | { readonly k: 'str'; readonly v: string }
  | { readonly k: 'ref'; readonly ref: Ref; readonly type: ColType }
  /** A value as a number: numbers as they are, text when it reads as one (else null). */
  | { readonly k: 'tonum'; readonly e: Expr }
  /** A value as text (numbers without a trailing `.0`). */
  | { readonly k: 'totext'; readonly e: Expr }
  | { readonly k: 'neg'; readonly e: Expr }
  | { readonly k: 'arith'; readonly op: ArithOp; readonly a: Expr; readonly b: Expr }
  | { readonly k: 'concat'; readonly args: readonly Expr[] }
  | { readonly k: 'lower' | 'upper' | 'len'; readonly e: Expr }
  /**
   * Group `group` (1-based) of an RE2 `regex` with `groups` capturing groups on text `e`;
   * null when the regex does not match, '' when the group took no part.
   */
  | {
      readonly k: 'capture';
      readonly e: Expr;
      readonly regex: string;
      readonly group: number;
      readonly groups: number;
    };

export type Cond =
  | {
      readonly k: 'cmp';
      /** Numbers compare as numbers (the column read as one), text as text. */
      readonly e: Expr;
      readonly op: CmpOp;
      readonly v: number | string;
    }
  | { readonly k: 'and' | 'or'; readonly items: readonly Cond[] }
  | { readonly k: 'not'; readonly c: Cond };

export interface Agg {
  readonly id: string;
  readonly op: AggOp;
  /** The value aggregated: for sum…p99 already a number (`tonum`); absent for count(). */
  readonly e?: Expr;
}

export interface Key {
  readonly id: string;
  readonly e: Expr;
}

export interface OrderKey {
  readonly e: Expr;
  readonly desc: boolean;
}

export type Stage =
  /** A new column `id` of every row. */
  | { readonly s: 'derive'; readonly id: string; readonly e: Expr }
  | { readonly s: 'filter'; readonly cond: Cond }
  /** One row per distinct `keys` (one row in all without keys): the relation is now `keys` + `aggs`. */
  | { readonly s: 'group'; readonly keys: readonly Key[]; readonly aggs: readonly Agg[] }
  /**
   * The `n` most frequent non-null `key`s (per `by`), relation `by?`, `key`, `countId`;
   * among equal counts, the first by `tieBreak` (keys over that relation: the key's own
   * order, numbers first for a text key, as `sort` orders it).
   */
  | {
      readonly s: 'top';
      readonly n: number;
      readonly key: Key;
      readonly by?: Key;
      readonly countId: string;
      readonly tieBreak: readonly OrderKey[];
    }
  /**
   * Buckets of `spanMs` over the query's range (`timeId`, Unix seconds), per series of
   * `by` (the TIMECHART_SERIES most frequent values, the rest `other`), every bucket of
   * every series present, aggregates of an empty bucket 0. `spanMs` absent: chosen from
   * the range as Timeline's `auto`.
   */
  | {
      readonly s: 'timechart';
      readonly spanMs?: number;
      readonly timeId: string;
      readonly by?: Key;
      readonly aggs: readonly Agg[];
    }
  /**
   * The rows of the events that have a `pattern_id`, one per id or, with `groups`, per
   * group of ids: each with its count and share of those events, and as its `keyId` its
   * most common id (among equal counts the first in code-point order).
   */
  | {
      readonly s: 'patterns';
      readonly keyId: string;
      readonly countId: string;
      readonly shareId: string;
      readonly groups?: PatternGroups;
    }
  /** The rows' order from here on (always total: the previous order breaks ties). */
  | { readonly s: 'order'; readonly keys: readonly OrderKey[] }
  /** The first `n` rows in the current order. */
  | { readonly s: 'limit'; readonly n: number };

/**
 * Pattern ids counted as one row of `patterns` (the Patterns query's rows: the ids of one
 * template text, features/patterns/grouped-patterns.ts): `ids[i]` is in the group `of[i]`
 * names (one of its ids). An id not listed is a row of its own.
 */
export interface PatternGroups {
  readonly ids: readonly string[];
  readonly of: readonly string[];
}

export interface OutputColumn {
  readonly name: string;
  readonly type: ColType;
  readonly e: Expr;
  /** Filled after the query runs: the template of this `pattern_id` (features/patterns). */
  readonly template?: true;
}

export interface Program {
  readonly stages: readonly Stage[];
  readonly columns: readonly OutputColumn[];
  /** Whether any stage aggregates (else the rows are events). */
  readonly aggregates: boolean;
  /**
   * Whether the rows of disjoint time windows, newest first, put one after the other are
   * the rows of the whole window: events in their natural order (no aggregate, sort or
   * limit). Such a Table is computed in slices with partial results, as a Search is.
   */
  readonly sliceable: boolean;
}
