/**
 * The query language: a Lucene/KQL-like search string → the filter AST.
 *
 * - `word`, `"quoted phrase"`: case-insensitive substring of `message` (text nodes).
 *   A word's leading/trailing `*` are dropped (substring matching covers them); an
 *   inner `*` (`fo*bar`) becomes a case-insensitive regex on `message`; `*` alone and
 *   `*:*` match everything. `/re/` alone is an RE2 regex on `message`.
 * - `field:value` is `eq`; `field:"a b"` too (quotes make everything literal).
 *   Unquoted wildcards: `pre*` startswith, `*suf` endswith, `*mid*` contains
 *   (case-insensitive, like every contains), other patterns (`a*b`) an anchored regex;
 *   `field:*` exists. `field:10.0.0.0/8` (an unquoted IPv4/IPv6 CIDR) is `cidr`.
 * - `message:` is the exception: `message:word`, `message:"a phrase"` and
 *   `message:fo*` mean exactly the bare `word`, `"a phrase"`, `fo*` (case-insensitive
 *   substring; wildcards as for bare words), so `message:refused` finds what `refused`
 *   finds. `message:*` (has a message), ranges, `>`/`<`, `/regex/` and an unquoted
 *   CIDR keep their field meaning. An exact comparison of the whole message is a
 *   regex (`message:/^connection refused$/`) or the JSON filter `eq`.
 * - `field:>=500` (also `>`, `<`, `<=`), `field:[100 TO 200]` (`between`, inclusive);
 *   `{}` bounds are exclusive, mixing is allowed (`[1 TO 5}`), `*` leaves a side open.
 * - `field:/re2/` regex (`\/` for a slash), `_exists_:field`, `field:(a OR b)` (a value
 *   group: `OR` of plain values becomes `in`).
 * - `AND`, `OR`, `NOT` (upper case), `-term` (NOT), `+term` (required: the same as
 *   plain), parentheses, implicit AND; precedence NOT > AND > OR.
 * - Backslash escapes any character in unquoted text (`path:\/var\/log`, `a\ b`,
 *   `\*`); inside quotes `\"` and `\\` (any `\x` is `x`).
 *
 * Value types: unquoted values stay strings in `eq`, wildcard and `in` conditions (the
 * backend coerces by column kind: `status:200` compares numerically). Relational and
 * range bounds that are unquoted numbers become numbers, so that `latency:>500` on a
 * string field compares numerically; quoted bounds stay strings.
 */

import { AppError } from '../errors/errors.js';
import { FILTER_LIMITS, type FilterNode, measure, TRUE } from '../filter/ast.js';
import { PipeError } from '../pipes/pipe-error.js';
import type { Pipe } from '../pipes/pipe-table.js';
import type { Program } from '../pipes/program.js';
import { resolvePipes } from '../pipes/resolve.js';
import { filterHelpers } from './filter-helpers.js';
import { pipeHelpers } from './pipe-helpers.js';
import { describePosition, type Position, positionOf, syntaxError, ValueError } from './query-errors.js';
import * as parser from './query-parser.generated.js';

/** Longest accepted query string. */
export const MAX_QUERY_LENGTH = 10_000;

/**
 * A query string that cannot be parsed or names an invalid value: a 400 whose message
 * names the position (`offset` is 0-based; `line` and `column` 1-based).
 */
export class QuerySyntaxError extends AppError {
  override name = 'QuerySyntaxError';

  constructor(
    message: string,
    readonly offset: number,
    readonly line: number,
    readonly column: number,
    path = 'query',
  ) {
    super(400, 'invalid_query', message, { [path]: [message] });
  }
}

/** What the grammar's actions call (`options.helpers`). */
const helpers = {
  query: (filter: FilterNode | null, pipes: readonly Pipe[]) => ({ filter: filter ?? TRUE, pipes }),
  ...filterHelpers,
  ...pipeHelpers,
};

/**
 * Offset of the first parenthesis nested deeper than the limit, if any. Checked before
 * parsing because nesting is the grammar's only recursion. Quoted strings are skipped;
 * regex literals are not, so their parentheses count too, which errs on the safe side.
 */
function tooDeep(input: string): number | undefined {
  let depth = 0;
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch === '\\') i++;
    else if (ch === '"') {
      for (i++; i < input.length && input[i] !== '"'; i++) if (input[i] === '\\') i++;
    } else if (ch === '(') {
      depth++;
      if (depth > FILTER_LIMITS.maxDepth) return i;
    } else if (ch === ')') depth = Math.max(0, depth - 1);
  }
  return undefined;
}

export interface ParseQueryOptions {
  /** Parameter name reported in the error's `errors` (default `query`). */
  readonly path?: string;
}

/**
 * Parses a query string into the filter AST; an empty or blank string is `true`.
 * Throws QuerySyntaxError naming the position of the problem, and for pipes, which only
 * the query type Table takes (parseTableQuery).
 */
export function parseQuery(input: string, options: ParseQueryOptions = {}): FilterNode {
  const { filter, pipes } = parseAll(input, options);
  const [first] = pipes;
  if (first) {
    const at = positionOf(input, input.lastIndexOf('|', first.at));
    throw new QuerySyntaxError(
      `Pipes need the query type Table, at ${describePosition(at)}: run this query as type Table, or remove the pipes`,
      at.offset,
      at.line,
      at.column,
      options.path,
    );
  }
  return filter;
}

/** A query of the type Table: its filter part and its pipes' program (docs/query-language.md#pipes). */
export function parseTableQuery(
  input: string,
  options: ParseQueryOptions = {},
): { filter: FilterNode; program: Program } {
  const { filter, pipes } = parseAll(input, options);
  try {
    return { filter, program: resolvePipes(pipes) };
  } catch (error) {
    if (!(error instanceof PipeError)) throw error;
    const at = positionOf(input, error.at);
    throw new QuerySyntaxError(
      `Invalid pipe at ${describePosition(at)}: ${error.message}`,
      at.offset,
      at.line,
      at.column,
      options.path,
    );
  }
}

function parseAll(input: string, options: ParseQueryOptions): { filter: FilterNode; pipes: readonly Pipe[] } {
  const fail = (message: string, at: Position, kind = 'Syntax error'): never => {
    throw new QuerySyntaxError(
      `${kind} at ${describePosition(at)}: ${message}`,
      at.offset,
      at.line,
      at.column,
      options.path,
    );
  };
  if (input.length > MAX_QUERY_LENGTH) {
    fail(
      `the query is longer than ${MAX_QUERY_LENGTH} characters`,
      positionOf(input, MAX_QUERY_LENGTH),
      'Query too long',
    );
  }
  if (/^\s*$/.test(input)) return { filter: TRUE, pipes: [] };
  const deep = tooDeep(input);
  if (deep !== undefined) {
    fail(`parentheses are nested more than ${FILTER_LIMITS.maxDepth} levels deep`, positionOf(input, deep));
  }
  let ast: FilterNode;
  let pipes: readonly Pipe[];
  try {
    // The generated parser is untyped; the grammar's start rule returns these.
    ({ filter: ast, pipes } = parser.parse(input, { helpers }) as { filter: FilterNode; pipes: Pipe[] });
  } catch (error) {
    if (error instanceof parser.SyntaxError) {
      const e = syntaxError(input, error);
      return fail(e.message, e.at);
    }
    if (error instanceof ValueError)
      return fail(error.message, positionOf(input, error.at.offset), error.kind);
    throw error;
  }
  const size = measure(ast);
  if (size.depth > FILTER_LIMITS.maxDepth || size.nodes > FILTER_LIMITS.maxNodes) {
    fail(
      `the query is too complex (at most ${FILTER_LIMITS.maxNodes} conditions and ${FILTER_LIMITS.maxDepth} levels of nesting)`,
      positionOf(input, 0),
      'Query too complex',
    );
  }
  return { filter: ast, pipes };
}
