/**
 * The grammar's helpers for the pipes part of a query (`options.helpers`, see grammar.ts):
 * the checks the grammar cannot make itself (numbers in range, spans, known functions and
 * aggregates, how deep an expression nests), each at its position.
 */
import { checkRegex } from '../filter/regex.js';
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
} from '../pipes/program.js';
import { checkCount } from '../pipes/resolve.js';
import { type Location, pipeError, ValueError } from './query-errors.js';

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
export const pipeHelpers = {
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
