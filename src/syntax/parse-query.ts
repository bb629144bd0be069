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

import { isIP } from 'node:net';
import type peggy from 'peggy';
import { AppError } from '../errors/errors.js';
import {
  and,
  cond,
  FILTER_LIMITS,
  type FilterNode,
  type FilterOp,
  measure,
  not,
  or,
  parseCidr,
  parseNumeric,
  type Scalar,
  TRUE,
  text,
} from '../filter/ast.js';
import { buildCondition, checkFieldName } from '../filter/conditions.js';
import { checkRegex, escapeRegex } from '../filter/regex.js';
import {
  AGG_OPS,
  type AggOp,
  type ArithOp,
  EVAL_FUNCTIONS,
  type EvalFunction,
  MAX_EXPRESSION_DEPTH,
  type Name,
  type ParsedAgg,
  type ParsedCond,
  type ParsedExpr,
  PIPE_NAMES,
  type Pipe,
  type Program,
} from '../pipes/program.js';
import { checkCount, PipeError, resolvePipes } from '../pipes/resolve.js';
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

interface Position {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

interface Location {
  readonly start: Position;
}

/** Line and column the way Peggy counts them (only `\n` starts a line). */
function positionOf(input: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < input.length; i++) {
    if (input.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { offset, line, column: offset - lineStart + 1 };
}

const describePosition = (p: Position) => `position ${p.offset} (line ${p.line}, column ${p.column})`;

/** Thrown by the grammar helpers; turned into a QuerySyntaxError carrying the path. */
class ValueError extends Error {
  constructor(
    message: string,
    readonly at: Position,
    readonly kind = 'Invalid value',
  ) {
    super(message);
  }
}

/** A problem in a pipe found while parsing (its offset; line and column are added later). */
const pipeError = (message: string, loc: Location) => new ValueError(message, loc.start, 'Invalid pipe');

// Shapes the grammar's actions produce (see grammar.ts).
type Segment = { readonly c: string; readonly escaped?: true } | { readonly star: true };
type Bound = { readonly star: true } | { readonly s: string; readonly quoted: boolean };
type RelOp = '>=' | '<=' | '>' | '<';
type ValueDesc =
  | { readonly t: 'or' | 'and'; readonly items: readonly ValueDesc[] }
  | { readonly t: 'unary'; readonly ops: readonly boolean[]; readonly item: ValueDesc }
  | {
      readonly t: 'range';
      readonly open: '[' | '{';
      readonly lo: Bound;
      readonly hi: Bound;
      readonly close: ']' | '}';
      readonly loc: Location;
    }
  | {
      readonly t: 'rel';
      readonly op: RelOp;
      readonly v: { s: string; quoted: boolean };
      readonly loc: Location;
    }
  | { readonly t: 'regex' | 'quoted'; readonly s: string; readonly loc: Location }
  | { readonly t: 'bare'; readonly segs: readonly Segment[]; readonly loc: Location };

/** The field `field:word` searches like a bare word rather than comparing exactly. */
const MESSAGE = 'message';

const REL_OPS: Readonly<Record<RelOp, FilterOp>> = { '>=': 'gte', '<=': 'lte', '>': 'gt', '<': 'lt' };

const isStar = (s: Segment): s is { readonly star: true } => 'star' in s;

/** Literal chunks between runs of unescaped `*`, and whether the value starts / ends with one. */
function wildcard(segs: readonly Segment[]) {
  const chunks: string[] = [];
  let current = '';
  for (const s of segs) {
    if (isStar(s)) {
      if (current !== '') chunks.push(current);
      current = '';
    } else current += s.c;
  }
  if (current !== '') chunks.push(current);
  const first = segs[0];
  const last = segs[segs.length - 1];
  return {
    chunks,
    leading: first !== undefined && isStar(first),
    trailing: last !== undefined && isStar(last),
  };
}

function condition(field: string, op: FilterOp, value: unknown, loc: Location): FilterNode {
  const result = buildCondition(field, op, value);
  if (!result.ok) throw new ValueError(`invalid value for "${field}": ${result.message}`, loc.start);
  return result.node;
}

/**
 * A bare word: a case-insensitive substring of the message. Leading and trailing `*`
 * drop out; inner ones make a case-insensitive regex; `*` alone matches everything.
 */
function wordNode(segs: readonly Segment[]): FilterNode {
  const { chunks } = wildcard(segs);
  const [only] = chunks;
  if (only === undefined) return TRUE;
  if (chunks.length === 1) return text(only);
  // Inner wildcards: the same case-insensitive substring search, as a regex.
  return cond(MESSAGE, 'regex', `(?is)${chunks.map(escapeRegex).join('.*')}`);
}

function bareValue(field: string, segs: readonly Segment[], loc: Location): FilterNode {
  const { chunks, leading, trailing } = wildcard(segs);
  if (!segs.some(isStar)) {
    const literal = chunks.join('');
    const slash = literal.lastIndexOf('/');
    // Only an unescaped address/prefix is a CIDR; escaping or quoting keeps it literal.
    if (slash > 0 && !segs.some((s) => 'escaped' in s) && isIP(literal.slice(0, slash)) !== 0) {
      if (parseCidr(literal) === undefined) {
        throw new ValueError(`invalid CIDR block "${literal}" for "${field}"`, loc.start);
      }
      return condition(field, 'cidr', literal, loc);
    }
    if (field === MESSAGE) return wordNode(segs);
    return condition(field, 'eq', literal, loc);
  }
  const [only] = chunks;
  if (only === undefined) return condition(field, 'exists', undefined, loc);
  if (field === MESSAGE) return wordNode(segs);
  if (chunks.length === 1) {
    if (leading && trailing) return condition(field, 'contains', only, loc);
    return condition(field, leading ? 'endswith' : 'startswith', only, loc);
  }
  const pattern = `${leading ? '' : '^'}${chunks.map(escapeRegex).join('.*')}${trailing ? '' : '$'}`;
  return condition(field, 'regex', pattern, loc);
}

function boundValue(b: Bound, numeric: boolean): string | number | undefined {
  if ('star' in b) return undefined;
  return numeric ? Number(b.s) : b.s;
}

function rangeValue(field: string, d: Extract<ValueDesc, { t: 'range' }>): FilterNode {
  const bounds = [d.lo, d.hi].filter((b): b is { s: string; quoted: boolean } => !('star' in b));
  // Numbers only when every given bound is an unquoted number; otherwise both strings.
  const numeric = bounds.every((b) => !b.quoted && parseNumeric(b.s) !== undefined);
  const lo = boundValue(d.lo, numeric);
  const hi = boundValue(d.hi, numeric);
  const loInclusive = d.open === '[';
  const hiInclusive = d.close === ']';
  if (lo !== undefined && hi !== undefined && loInclusive && hiInclusive) {
    return condition(field, 'between', [lo, hi], d.loc);
  }
  const parts: FilterNode[] = [];
  if (lo !== undefined) parts.push(condition(field, loInclusive ? 'gte' : 'gt', lo, d.loc));
  if (hi !== undefined) parts.push(condition(field, hiInclusive ? 'lte' : 'lt', hi, d.loc));
  return parts.length === 0 ? condition(field, 'exists', undefined, d.loc) : and(...parts);
}

/** `f:(a OR b)` of plain values is `f in [a, b]`; nested groups merge. */
function foldIn(field: string, items: readonly FilterNode[]): FilterNode | undefined {
  const values: Scalar[] = [];
  for (const item of items) {
    if (item.kind !== 'cond' || item.field !== field) return undefined;
    if (item.op === 'eq') values.push(item.value);
    else if (item.op === 'in') values.push(...item.value);
    else return undefined;
  }
  return values.length <= FILTER_LIMITS.maxNodes ? cond(field, 'in', values) : undefined;
}

function applyNegations(ops: readonly boolean[], item: FilterNode): FilterNode {
  // `+` (false) only marks a required term, which every term already is.
  const negations = ops.filter(Boolean).length;
  return negations % 2 === 1 ? not(item) : item;
}

function fieldValue(field: string, d: ValueDesc): FilterNode {
  switch (d.t) {
    case 'or': {
      const items = d.items.map((i) => fieldValue(field, i));
      const [first, ...rest] = items;
      if (first === undefined) return TRUE;
      return rest.length === 0 ? first : (foldIn(field, items) ?? or(first, ...rest));
    }
    case 'and':
      return and(...d.items.map((i) => fieldValue(field, i)));
    case 'unary':
      return applyNegations(d.ops, fieldValue(field, d.item));
    case 'range':
      return rangeValue(field, d);
    case 'rel': {
      const value = !d.v.quoted && parseNumeric(d.v.s) !== undefined ? Number(d.v.s) : d.v.s;
      return condition(field, REL_OPS[d.op], value, d.loc);
    }
    case 'regex':
      return condition(field, 'regex', d.s, d.loc);
    case 'quoted':
      return field === MESSAGE ? text(d.s, true) : condition(field, 'eq', d.s, d.loc);
    case 'bare':
      return bareValue(field, d.segs, d.loc);
    default:
      return d satisfies never;
  }
}

function checkField(field: string, loc: Location): void {
  const problem = checkFieldName(field);
  if (problem !== undefined) throw new ValueError(`field name ${problem}`, loc.start);
}

/** How each pipe is written, for the message when one is not complete. */
const PIPE_USAGE: Readonly<Record<(typeof PIPE_NAMES)[number], string>> = {
  stats: 'stats <aggregate>(field) [as name], … [by field, …], e.g. stats count() by host',
  top: 'top [N] field [by field], e.g. top 5 host',
  timechart: 'timechart [span=5m] <aggregate>(field), … [by field], e.g. timechart count()',
  patterns: 'patterns [N]',
  fields: 'fields name, …',
  sort: 'sort [-]name, …',
  limit: 'limit N (1 to 10,000)',
  where: 'where <column> <op> <number or "text">, with AND, OR, NOT and parentheses',
  extract: 'extract "text with <name> holes" [from field]',
  rex: 'rex "RE2 with (?P<name>…) groups" [from field]',
  rename: 'rename a as b, …',
  eval: 'eval name = <expression>, e.g. eval kb = bytes / 1024',
};

type Arith = readonly [string, ParsedExpr];

/**
 * The depth of each expression and condition node the pipe helpers made; a node not in it
 * is a leaf (a number, a text, a column, a comparison), of depth 1. Each node is measured
 * as it is made, from its children's depths, so no measure recurses.
 */
const depths = new WeakMap<ParsedExpr | ParsedCond, number>();
const depthOf = (node: ParsedExpr | ParsedCond) => depths.get(node) ?? 1;

/** `node`, one level deeper than its deepest child; past MAX_EXPRESSION_DEPTH a 400 at `loc`. */
function nested<T extends ParsedExpr | ParsedCond>(node: T, deepestChild: number, loc: Location): T {
  const depth = deepestChild + 1;
  if (depth > MAX_EXPRESSION_DEPTH)
    throw new ValueError(
      `the expression is nested more than ${MAX_EXPRESSION_DEPTH} levels deep (each operator, unary minus, NOT and function call is a level)`,
      loc.start,
      'Query too complex',
    );
  depths.set(node, depth);
  return node;
}

/** The pipe helpers of the grammar: checks it cannot make itself, at their position. */
const pipeHelpers = {
  query: (filter: FilterNode | null, pipes: readonly Pipe[]) => ({ filter: filter ?? TRUE, pipes }),
  count(s: string, loc: Location): number {
    try {
      return checkCount(Number(s), loc.start.offset, 'the number');
    } catch (e) {
      throw pipeError((e as Error).message, loc);
    }
  },
  number(s: string, loc: Location): number {
    const n = Number(s);
    if (!Number.isFinite(n)) throw pipeError(`${s} is beyond the largest number (about 1.8e308)`, loc);
    return n;
  },
  span(s: string, loc: Location): number {
    const m = /^([0-9]+)(ms|s|m|h|d|w)$/.exec(s);
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m?.[2] ?? ''];
    const ms = m && unit ? Number(m[1]) * unit : Number.NaN;
    if (!(ms >= 1000 && ms <= 366 * 86_400_000))
      throw pipeError(`"${s}" is not a span from 1s to 366d (e.g. 30s, 5m, 1h, 1d)`, loc);
    return ms;
  },
  top: (n: number | null, field: Name, by: Name | null, loc: Location): Pipe => ({
    p: 'top',
    n: n ?? 10,
    field,
    ...(by ? { by } : {}),
    at: loc.start.offset,
  }),
  timechart: (span: number | null, aggs: ParsedAgg[], by: Name | null, loc: Location): Pipe => ({
    p: 'timechart',
    aggs,
    ...(span !== null ? { spanMs: span } : {}),
    ...(by ? { by } : {}),
    at: loc.start.offset,
  }),
  rex(s: { s: string; at: number }, from: Name | null, loc: Location): Pipe {
    const problem = checkRegex(s.s);
    if (problem !== undefined)
      throw new ValueError(`invalid regex: ${problem}`, { ...loc.start, offset: s.at }, 'Invalid pipe');
    return { p: 'rex', regex: s.s, regexAt: s.at, ...(from ? { from } : {}), at: loc.start.offset };
  },
  arith: (head: ParsedExpr, tail: readonly Arith[], loc: Location): ParsedExpr =>
    tail.reduce<ParsedExpr>(
      (a, [op, b]) => nested({ k: 'arith', op: op as ArithOp, a, b }, Math.max(depthOf(a), depthOf(b)), loc),
      head,
    ),
  neg(count: number, e: ParsedExpr, loc: Location): ParsedExpr {
    let out = e;
    for (let i = 0; i < count; i++) out = nested({ k: 'neg', e: out }, depthOf(out), loc);
    return out;
  },
  fn(name: string, args: ParsedExpr[], loc: Location): ParsedExpr {
    const fn = name.toLowerCase();
    if (!(EVAL_FUNCTIONS as readonly string[]).includes(fn))
      throw pipeError(`unknown function "${name}"; use one of ${EVAL_FUNCTIONS.join(', ')}`, loc);
    return nested(
      { k: 'fn', fn: fn as EvalFunction, args, at: loc.start.offset },
      Math.max(0, ...args.map(depthOf)),
      loc,
    );
  },
  conds: (k: 'and' | 'or', head: ParsedCond, tail: readonly ParsedCond[], loc: Location): ParsedCond =>
    tail.length
      ? nested({ k, items: [head, ...tail] }, Math.max(depthOf(head), ...tail.map(depthOf)), loc)
      : head,
  not(count: number, c: ParsedCond, loc: Location): ParsedCond {
    let out = c;
    for (let i = 0; i < count; i++) out = nested({ k: 'not', c: out }, depthOf(out), loc);
    return out;
  },
  agg(name: string, field: Name | null, as: Name | null, loc: Location): ParsedAgg {
    const op = name.toLowerCase();
    if (!(AGG_OPS as readonly string[]).includes(op))
      throw pipeError(
        `unknown aggregate "${name}"; use one of ${AGG_OPS.map((o) => `${o}()`).join(', ')}`,
        loc,
      );
    return { op: op as AggOp, ...(field ? { field } : {}), ...(as ? { as } : {}), at: loc.start.offset };
  },
  unknownPipe(name: string, loc: Location): never {
    const usage = Object.hasOwn(PIPE_USAGE, name) ? PIPE_USAGE[name as keyof typeof PIPE_USAGE] : undefined;
    if (usage) throw pipeError(`"${name}" is not complete: write ${usage}`, loc);
    throw pipeError(`unknown pipe "${name}"; use one of ${PIPE_NAMES.join(', ')}`, loc);
  },
};

/** What the grammar's actions call (`options.helpers`). */
const helpers = {
  ...pipeHelpers,
  or: (head: FilterNode, tail: readonly FilterNode[]) => or(head, ...tail),
  and: (head: FilterNode, tail: readonly FilterNode[]) => and(head, ...tail),
  unary: applyNegations,
  all: () => TRUE,
  exists(field: string, loc: Location): FilterNode {
    checkField(field, loc);
    return cond(field, 'exists');
  },
  field(field: string, value: ValueDesc, loc: Location): FilterNode {
    checkField(field, loc);
    return fieldValue(field, value);
  },
  messageRegex: (pattern: string, loc: Location) => condition('message', 'regex', pattern, loc),
  phrase: (value: string) => text(value, true),
  word: wordNode,
};

// Expectations that all mean "a new term could start here", and "a value could start here".
const TERM_STARTS = new Set([
  '"("',
  '"-"',
  '"+"',
  'NOT',
  '"*:*"',
  '"_exists_:"',
  'field name',
  '"/"',
  '"\\""',
  '"\\\\"',
  '"*"',
  'word',
]);
const VALUE_STARTS = new Set([
  '"("',
  '"-"',
  '"+"',
  'NOT',
  'range',
  '">="',
  '"<="',
  '">"',
  '"<"',
  '"/"',
  '"\\""',
  '"\\\\"',
  '"*"',
  'value',
]);

function describeExpectation(e: peggy.parser.Expectation): string {
  switch (e.type) {
    case 'literal':
      return /^[A-Z]+$/.test(e.text) ? e.text : JSON.stringify(e.text);
    case 'class':
      return 'character';
    case 'any':
      return 'character';
    case 'end':
      return 'end of input';
    case 'other':
      return e.description;
    default:
      return e satisfies never;
  }
}

function describeExpected(expected: readonly peggy.parser.Expectation[]): string {
  let names = new Set(expected.map(describeExpectation));
  const collapse = (group: Set<string>, markers: readonly string[], label: string) => {
    if (!markers.some((m) => names.has(m))) return;
    names = new Set([...names].filter((n) => !group.has(n)));
    names.add(label);
  };
  // Markers: expectations that arise only where a whole term (or value) may start.
  collapse(TERM_STARTS, ['word', 'field name', '"_exists_:"', '"*:*"'], 'a search term');
  collapse(VALUE_STARTS, ['value', 'range', '">="', '"-"'], 'a value');
  // Whitespace, any character and backslash escapes are possible almost anywhere: noise.
  for (const noise of ['whitespace', 'character', '"\\\\"', '"\\\\/"'])
    if (names.size > 1) names.delete(noise);
  const list = [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  if (list.length <= 1) return list[0] ?? 'something else';
  return `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]}`;
}

const rank = (name: string) => (name === 'end of input' ? 2 : name.startsWith('a ') ? 1 : 0);

function syntaxError(input: string, error: InstanceType<typeof parser.SyntaxError>): ValueError {
  const at = positionOf(input, error.location.start.offset);
  const found = error.found === null ? 'end of input' : JSON.stringify(error.found);
  const message = error.expected
    ? `expected ${describeExpected(error.expected)} but found ${found}`
    : error.message;
  return new ValueError(message, at);
}

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
