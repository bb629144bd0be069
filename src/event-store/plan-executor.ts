import type { StoredEvent } from '../core/event.js';
import { and, cond } from '../filter/ast.js';
import { MAX_TABLE_ROWS } from '../pipes/program.js';
import { executeChanges } from './changes-executor.js';
import { shapeFields } from './fields-shaper.js';
import type {
  ChangesPlan,
  ExecOptions,
  FieldsPlan,
  LastNPlan,
  PatternsPlan,
  PatternsResult,
  QueryPlan,
  ResultOf,
  SearchPlan,
  SearchResult,
  SummaryPlan,
  TablePlan,
  TimelinePlan,
  TopNPlan,
} from './query-plan.js';
import {
  type ResultRow,
  type StatementRows,
  samplesFrom,
  shapeLastN,
  shapePatternCounts,
  shapePatternDetails,
  shapeSummary,
  shapeTable,
  shapeTimeline,
  shapeTopN,
} from './result-shaper.js';

/**
 * The event-store seam, as kysely splits a dialect from its driver (ADR 0006): an engine
 * supplies each plan as one of its own statements (`PlanDialect`, the `plans` of its
 * dialect object, store-dialect.ts) and a driver that runs a statement and returns neutral
 * rows (`Driver`, the store runtime's `run`); this one executor dispatches the plan,
 * runs a search's page and count side by side and shapes the rows into the plan's result
 * (result-shaper.ts), the same for every engine. How an engine gives a grand total (DuckDB
 * a row marked in the result, ClickHouse `WITH TOTALS`) stays inside its own statements
 * and driver: both hand over `{ rows, totals }`.
 */
export interface PlanDialect<S> {
  /**
   * The plan within its scope (ADR 0013): `scopedPlan`, its scope's filter ANDed into its
   * filter, unless the engine reads scopes itself as each statement is built (DuckDB's
   * stream membership, ADR 0016).
   */
  scoped<P extends QueryPlan>(plan: P): P;
  /** A page of a search, in its order. */
  searchRows(plan: SearchPlan): S;
  /** The number of a search's matches, as a row `{ n }`. */
  searchCount(plan: SearchPlan): S;
  /**
   * Whether a search's matches are likely to fit its first page (an index narrows it to
   * few events): its page is then read first, and its count only when the page is full.
   */
  fewMatches(plan: SearchPlan): boolean;
  /** Rows `{ v, c }`, totals `{ c }`. */
  topn(plan: TopNPlan): S;
  /** Rows `{ v, last_seen, first_seen, c }`. */
  lastn(plan: LastNPlan): S;
  /** Rows `{ g0…, c, m0… }` per group, totals likewise (one row and no totals without groups). */
  summary(plan: SummaryPlan): S;
  /** Rows `{ b, s, c }`. */
  timeline(plan: TimelinePlan): S;
  /**
   * Rows `{ v, b, c, first_seen, last_seen, total }` of the top `n` patterns, one per
   * pattern and bucket it has events in (`b`: 0 … buckets − 1 over the range, `c` its
   * count there, first and last seen there); `total`: every matching event with a pattern.
   */
  patternCounts(plan: PatternsPlan): S;
  /** Rows `{ v, ev_id, ts, message }`: the newest 3 events of each of these patterns. */
  patternSamples(plan: PatternsPlan, ids: readonly string[]): S;
  /** Rows `{ c0, c1, … }` of a Table's program, at most MAX_TABLE_ROWS + 1, in order. */
  tableRows(plan: TablePlan): S;
  /** The number of rows of a Table's program, as a row `{ n }`. */
  tableCount(plan: TablePlan): S;
  /**
   * Rows `{ k, v, f, b }` of a changes plan's candidates (its `fields` given): `f` and `b`
   * the events in scope in the focus window and in the baseline; `k` -1 for the totals
   * (one row, `v` null), 0 for each `pattern_id` (`v`), `i + 1` for each value of
   * `fields[i]` among its `CHANGE_VALUES` most common in either window (by count, then
   * value text; `v` as text, absent values left out).
   */
  changeCounts(plan: ChangesPlan & { fields: string[] }): S;
  /**
   * Rows `{ name, n, num }` of the fields a changes plan's focus window has, over all its
   * events in scope: `n` of them have the field, `num` of those as a JSON number (0 for a
   * column); `name` null for the window's count of events.
   */
  fieldPresence(plan: ChangesPlan): S;
  /** Rows of the fields of a Fields plan's sample, one a field with its values (fields-shaper.ts). */
  fieldValues(plan: FieldsPlan): S;
  /**
   * Rows of whole events (`SELECT *`, as `searchRows`): the one `evId` names, at most one,
   * read near `receivedAtMs` (the time its ULID holds), in no scope (the runtime checks it).
   */
  byId(evId: string, receivedAtMs: number): S;
  /** Rows `{ h, n }`: how many events each hour of `ts` holds (`h`: hours since the epoch). */
  hourCounts(): S;
  /** A row of `searchRows` (or `byId`) as the event it holds. */
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
  // The one place a plan meets its scope, for every engine (ADR 0013).
  return (await executeAny(dialect, run, dialect.scoped(plan), opts)) as ResultOf<P>;
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
      const page = () =>
        plan.limit > 0 ? run(dialect.searchRows(plan), opts).then((r) => r.rows.map(dialect.event)) : [];
      const count = () =>
        plan.count ? run(dialect.searchCount(plan), countOpts).then((r) => Number(r.rows[0]?.n ?? 0)) : -1;
      if (plan.count && plan.limit > 0 && dialect.fewMatches(plan)) {
        // A page short of its limit holds every match from its offset on: it gives the
        // total, and the count is not run (a rare word: one statement instead of two).
        const events = await page();
        const short = events.length < plan.limit && (events.length > 0 || plan.offset === 0);
        return { total: short ? plan.offset + events.length : await count(), events } satisfies SearchResult;
      }
      const [events, total] = await Promise.all([page(), count()]);
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
    case 'patterns':
      return patterns(dialect, run, plan, opts);
    case 'table': {
      const { rows } = await run(dialect.tableRows(plan), opts);
      // The count only when the rows were cut: otherwise they are all there is.
      const totalRows =
        rows.length > MAX_TABLE_ROWS
          ? Number(
              (await run(dialect.tableCount(plan), opts.signal ? { signal: opts.signal } : {})).rows[0]?.n ??
                0,
            )
          : rows.length;
      return shapeTable(plan, rows.slice(0, MAX_TABLE_ROWS), totalRows);
    }
    case 'fields': {
      // The sample's fields and the number of matches, side by side.
      const { filter, range, scope } = plan;
      const count: SearchPlan = {
        kind: 'search',
        filter,
        range,
        scope,
        sort: [],
        limit: 0,
        offset: 0,
        count: true,
      };
      const [values, total] = await Promise.all([
        run(dialect.fieldValues(plan), opts),
        run(dialect.searchCount(count), opts.signal ? { signal: opts.signal } : {}),
      ]);
      return shapeFields(plan, values.rows, Number(total.rows[0]?.n ?? 0));
    }
    case 'changes':
      return executeChanges(dialect, run, plan, opts);
    default:
      return plan satisfies never;
  }
}

/**
 * Patterns in two or three statements: the top patterns with their counts per bucket (one
 * scan, the TopN of `pattern_id` by bucket), then, for those alone, their newest samples,
 * read only from the buckets that hold each pattern's newest (`samplesFrom`), and their
 * counts in the range compared to.
 */
async function patterns<S>(
  dialect: PlanDialect<S>,
  run: Driver<S>,
  plan: PatternsPlan,
  opts: ExecOptions,
): Promise<PatternsResult> {
  const counts = shapePatternCounts(plan, await run(dialect.patternCounts(plan), opts));
  const ids = counts.items.map((i) => i.patternId);
  if (!ids.length) return counts;
  const plain = opts.signal ? { signal: opts.signal } : {};
  const only = cond('pattern_id', 'in', ids);
  const recent = { ...plan, range: { fromMs: samplesFrom(plan, counts), toMs: plan.range.toMs } };
  const [samples, previous] = await Promise.all([
    run(dialect.patternSamples(recent, ids), plain),
    plan.compareTo
      ? run(
          dialect.topn({
            kind: 'topn',
            scope: plan.scope,
            filter: and(plan.filter, only),
            range: plan.compareTo,
            field: 'pattern_id',
            n: ids.length,
          }),
          plain,
        )
      : null,
  ]);
  return shapePatternDetails(counts, samples.rows, previous?.rows ?? null);
}
