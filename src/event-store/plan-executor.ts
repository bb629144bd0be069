import type { StoredEvent } from '../core/event.js';
import type {
  ExecOptions,
  LastNPlan,
  QueryPlan,
  ResultOf,
  SearchPlan,
  SearchResult,
  SummaryPlan,
  TimelinePlan,
  TopNPlan,
} from './query-plan.js';
import { scopedPlan } from './read-scope.js';
import {
  type ResultRow,
  type StatementRows,
  shapeLastN,
  shapeSummary,
  shapeTimeline,
  shapeTopN,
} from './result-shaper.js';

/**
 * The event-store seam, as kysely splits a dialect from its driver (ADR 0006): an engine
 * supplies each plan as one of its own statements (`PlanDialect`) and a driver that runs
 * a statement and returns neutral rows (`Driver`); this one executor dispatches the plan,
 * runs a search's page and count side by side and shapes the rows into the plan's result
 * (result-shaper.ts), the same for every engine. How an engine gives a grand total (DuckDB
 * a row marked in the result, ClickHouse `WITH TOTALS`) stays inside its own statements
 * and driver: both hand over `{ rows, totals }`.
 */
export interface PlanDialect<S> {
  /** A page of a search, in its order. */
  searchRows(plan: SearchPlan): S;
  /** The number of a search's matches, as a row `{ n }`. */
  searchCount(plan: SearchPlan): S;
  /** Rows `{ v, c }`, totals `{ c }`. */
  topn(plan: TopNPlan): S;
  /** Rows `{ v, last_seen, first_seen, c }`. */
  lastn(plan: LastNPlan): S;
  /** Rows `{ g0…, c, m0… }` per group, totals likewise (one row and no totals without groups). */
  summary(plan: SummaryPlan): S;
  /** Rows `{ b, s, c }`. */
  timeline(plan: TimelinePlan): S;
  /** A row of `searchRows` as the event it holds. */
  event(row: ResultRow): StoredEvent;
}

/** Runs one statement; aborting `opts.signal` interrupts the engine's work. */
export type Driver<S> = (statement: S, opts: ExecOptions) => Promise<StatementRows>;

export async function executePlan<S, P extends QueryPlan>(
  dialect: PlanDialect<S>,
  run: Driver<S>,
  plan: P,
  opts: ExecOptions = {},
): Promise<ResultOf<P>> {
  // The one place a plan's scope meets its filter, for every engine (ADR 0013).
  return (await executeAny(dialect, run, scopedPlan(plan), opts)) as ResultOf<P>;
}

async function executeAny<S>(
  dialect: PlanDialect<S>,
  run: Driver<S>,
  plan: QueryPlan,
  opts: ExecOptions,
): Promise<ResultOf<QueryPlan>> {
  switch (plan.kind) {
    case 'search': {
      // A page and its total are independent statements, run side by side; the progress
      // reported is the page's when there is one.
      const countOpts: ExecOptions = plan.limit > 0 ? (opts.signal ? { signal: opts.signal } : {}) : opts;
      const [events, total] = await Promise.all([
        plan.limit > 0 ? run(dialect.searchRows(plan), opts).then((r) => r.rows.map(dialect.event)) : [],
        plan.count ? run(dialect.searchCount(plan), countOpts).then((r) => Number(r.rows[0]?.n ?? 0)) : -1,
      ]);
      return { total, events } satisfies SearchResult;
    }
    case 'topn':
      return shapeTopN(await run(dialect.topn(plan), opts));
    case 'lastn':
      return shapeLastN((await run(dialect.lastn(plan), opts)).rows);
    case 'summary':
      return shapeSummary(plan, await run(dialect.summary(plan), opts));
    case 'timeline':
      return shapeTimeline(plan, (await run(dialect.timeline(plan), opts)).rows);
    default:
      return plan satisfies never;
  }
}
