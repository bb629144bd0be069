import type { FilterNode } from '../filter/ast.js';
import type { PlanDialect } from './plan-executor.js';
import type { ExecOptions, SearchPlan } from './query-plan.js';
import type { ResultRow, StatementRows } from './result-shaper.js';
import type { OrderDialect } from './sql/order-sql.js';
import type { PipeDialect } from './sql/pipe-sql.js';
import type { SqlParams } from './sql/sql-params.js';

/**
 * One engine, as kysely's `Dialect` is one database (ADR 0006): a small object naming its
 * collaborators, its statements `S` being whatever its driver runs. The store runtime
 * (store-runtime.ts) does around them what every engine does the same way; a new engine
 * is a folder holding its dialect, its driver and its store (appends and maintenance).
 */
export interface EventStoreDialect<S> {
  /** Its filter compiler: the shared one (sql/filter-compiler.ts) through the engine's hooks. */
  readonly filter: (node: FilterNode, params: SqlParams) => string;
  /** How it spells a search's order (sql/order-sql.ts). */
  readonly order: OrderDialect;
  /** How it spells the pipes of a Table (sql/pipe-sql.ts). */
  readonly pipes: PipeDialect;
  /** Every plan, and the store's own reads, as its statements (plan-executor.ts). */
  readonly plans: PlanDialect<S>;
  /** Runs them. */
  readonly driver: StoreDriver<S>;
}

/**
 * What runs an engine's statements. Stopping its work when a signal aborts is the
 * driver's (each engine stops it its own way); the runtime turns what follows into the
 * contract's AbortError, and other failures into `error`'s.
 */
export interface StoreDriver<S> {
  /** Runs one statement and returns its neutral rows (plan-executor.ts). */
  run(statement: S, opts: ExecOptions): Promise<StatementRows>;
  /** A search's rows, in its order, a batch at a time (plan within its scope). */
  stream(plan: SearchPlan, opts: ExecOptions): StreamCursor;
  /**
   * An engine failure as clients may see it (out of memory, no room, unreachable), the
   * engine's own error kept as `cause`; anything else unchanged.
   */
  error(err: unknown): unknown;
}

/** A streamed statement under way. */
export interface StreamCursor {
  /**
   * Its rows, a batch at a time (a batch is read row by row as it is consumed, so a wide
   * batch is never held whole as JavaScript values).
   */
  readonly batches: AsyncIterable<Iterable<ResultRow>>;
  /** Stops the engine's work: the reader's signal was aborted. */
  interrupt(): void;
  /** Lets go of what it holds; `finished` false when the reader stopped early or it failed. */
  close(finished: boolean): void;
}
