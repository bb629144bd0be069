/**
 * The grammar's helpers for the pipes part of a query (`options.helpers`, see grammar.ts):
 * the checks the grammar cannot make itself (numbers in range, spans, known functions and
 * aggregates, how deep an expression nests), each at its position.
 */
import { checkCount, PipeError } from '../pipes/pipe-error.js';
import { PIPE_TABLE, type Pipe, type PipeArgs, type PipeName, readPipe } from '../pipes/pipe-table.js';
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
} from '../pipes/program.js';
import { type Location, pipeError, ValueError } from './query-errors.js';

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
  /** A pipe the grammar read, with its entry's checks (pipe-table.ts). */
  pipe<N extends PipeName>(name: N, args: PipeArgs[N], loc: Location): Pipe {
    try {
      return readPipe(name, args, loc.start.offset);
    } catch (e) {
      if (e instanceof PipeError)
        throw new ValueError(e.message, { ...loc.start, offset: e.at }, 'Invalid pipe');
      throw e;
    }
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
    const usage = Object.hasOwn(PIPE_TABLE, name) ? PIPE_TABLE[name as PipeName].usage : undefined;
    if (usage) throw pipeError(`"${name}" is not complete: write ${usage}`, loc);
    throw pipeError(`unknown pipe "${name}"; use one of ${PIPE_NAMES.join(', ')}`, loc);
  },
};
