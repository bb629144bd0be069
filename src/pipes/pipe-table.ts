/**
 * The pipes' front half, one file a pipe under table/ (docs/query-language.md#pipes): how
 * it is written (for the message when one is not complete), how its arguments are read
 * (its rules of the grammar, which syntax/grammar.ts puts together), what is checked as
 * they are read, whether it keeps rows as they are (`rowwise`), and how it resolves into
 * the program's stages (resolve.ts calls each pipe's entry in turn with one PipeScope).
 *
 * A new pipe is its file in table/, its line in PIPE_TABLE below and its arguments in
 * PipeArgs; its name goes in shared/pipe-names.ts too, where the web UI's completion reads
 * it (the shared folder imports nothing), and the table is typed by that list, so one
 * without the other does not compile. A pipe that needs a stage the program does not have
 * yet adds it to program.ts and to the evaluators (run.ts, event-store/sql/pipe-sql.ts),
 * whose switches over stages are exhaustive: a stage one of them lacks does not compile.
 */
import type {
  Agg,
  ColType,
  Cond,
  Expr,
  Name,
  OrderKey,
  ParsedAgg,
  ParsedCond,
  ParsedExpr,
  PIPE_NAMES,
  Stage,
} from './program.js';
import { evalPipe } from './table/eval.js';
import { extractPipe } from './table/extract.js';
import { fieldsPipe } from './table/fields.js';
import { limitPipe } from './table/limit.js';
import { patternsPipe } from './table/patterns.js';
import { renamePipe } from './table/rename.js';
import { rexPipe } from './table/rex.js';
import { sortPipe } from './table/sort.js';
import { statsPipe } from './table/stats.js';
import { timechartPipe } from './table/timechart.js';
import { topPipe } from './table/top.js';
import { wherePipe } from './table/where.js';

export type PipeName = (typeof PIPE_NAMES)[number];

/** What each pipe's grammar reads: its arguments, names with where they were written. */
export interface PipeArgs {
  stats: { readonly aggs: readonly ParsedAgg[]; readonly by: readonly Name[] };
  top: { readonly n: number; readonly field: Name; readonly by?: Name };
  timechart: { readonly spanMs?: number; readonly aggs: readonly ParsedAgg[]; readonly by?: Name };
  patterns: { readonly n: number };
  fields: { readonly names: readonly Name[] };
  sort: { readonly keys: ReadonlyArray<{ readonly col: Name; readonly desc: boolean }> };
  limit: { readonly n: number };
  where: { readonly cond: ParsedCond };
  extract: { readonly pattern: string; readonly patternAt: number; readonly from?: Name };
  rex: { readonly regex: string; readonly regexAt: number; readonly from?: Name };
  rename: { readonly pairs: ReadonlyArray<readonly [Name, Name]> };
  eval: { readonly name: Name; readonly expr: ParsedExpr };
}

/** One pipe as the parser read it: its name, its arguments and its offset in the whole query. */
export type Pipe = { [N in PipeName]: { readonly p: N; readonly at: number } & PipeArgs[N] }[PipeName];

export type PipeOf<N extends PipeName> = Extract<Pipe, { readonly p: N }>;

/** What a name means at some point of the pipes: a value with its type, or why it is gone. */
export type ColumnSymbol =
  | { readonly e: Expr; readonly type: ColType; readonly template?: true }
  | { readonly gone: string };

/**
 * What a pipe's entry resolves with (resolve.ts): the stages so far, the names in scope,
 * the columns shown and the rows' order, with the lookups and conversions every pipe uses.
 * A name is looked up where it was written, so a problem is a PipeError at its position.
 */
export interface PipeScope {
  readonly stages: Stage[];
  /** Until the first aggregation, a name not in `symbols` is an event field. */
  readonly events: boolean;
  symbols: Map<string, ColumnSymbol>;
  visible: string[];
  order: OrderKey[];
  /**
   * The rows' order or number depends on more than each row alone (a sort, a limit, or any
   * pipe that does not say it is `rowwise`): the query is then never computed per time slice.
   */
  reordered: boolean;
  /** A fresh column id (`_c1`, …). */
  id(): string;
  lookup(n: Name): { e: Expr; type: ColType; template?: true };
  ref(n: Name): Expr;
  define(name: string, e: Expr, type: ColType, extra?: { template?: true }): void;
  /** A fresh relation of these columns (after an aggregation), in this order. */
  relation(cols: ReadonlyArray<{ name: string; id: string; type: ColType; template?: true }>): void;
  unique(names: readonly Name[]): void;
  typeOf(e: Expr): ColType;
  orderBy(e: Expr, desc: boolean): OrderKey[];
  text(e: Expr): Expr;
  expr(p: ParsedExpr): Expr;
  cond(c: ParsedCond): Cond;
  agg(a: ParsedAgg): { name: string; agg: Agg };
  needEvents(p: Pipe, what: string): void;
}

export interface PipeDef<N extends PipeName> {
  /** How it is written, for the message when one is not complete. */
  readonly usage: string;
  /**
   * Its rules of the grammar (Peggy). The first, `<Name>Pipe` (`TopPipe`), reads the pipe
   * from its name on and returns `h.pipe('<name>', <its PipeArgs>, location())`; the rules
   * every pipe shares (Col, Count, AggList, …) are grammar.ts's.
   */
  readonly grammar: string;
  /** What the grammar cannot check, as the pipe is read (a PipeError at its position). */
  readonly check?: (args: PipeArgs[N]) => void;
  /**
   * Each row out depends on one row in alone, and rows keep their order and number (where,
   * eval, rename…): the query may then be computed per time slice and the slices joined. A
   * pipe that does not say so is taken to reorder (the safe default: a pipe that forgets it
   * is slower, never wrong).
   */
  readonly rowwise?: true;
  /** Its stages and columns, given those of the pipes before it. */
  readonly resolve: (pipe: PipeOf<N>, scope: PipeScope) => void;
}

/** The rule of the grammar that reads a pipe: `TopPipe` for `top`. */
export const pipeRule = (name: PipeName) => `${name[0]?.toUpperCase()}${name.slice(1)}Pipe`;

/** A pipe the grammar read (`h.pipe`): checked, with its name and offset. */
export function readPipe<N extends PipeName>(name: N, args: PipeArgs[N], at: number): Pipe {
  PIPE_TABLE[name].check?.(args);
  // The name and the arguments belong together by construction: TypeScript cannot see it.
  return { p: name, ...args, at } as Pipe;
}

/** The pipes, one file each under table/, in the order of PIPE_NAMES. */
export const PIPE_TABLE: { readonly [N in PipeName]: PipeDef<N> } = {
  stats: statsPipe,
  top: topPipe,
  timechart: timechartPipe,
  patterns: patternsPipe,
  fields: fieldsPipe,
  sort: sortPipe,
  limit: limitPipe,
  where: wherePipe,
  extract: extractPipe,
  rex: rexPipe,
  rename: renamePipe,
  eval: evalPipe,
};
