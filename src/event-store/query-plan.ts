import type { StoredEvent } from '../core/event.js';
import type { FilterNode } from '../filter/ast.js';
import type { SortTerm } from '../filter/sort.js';
import type { ColType, Program } from '../pipes/program.js';
import type { Cell } from '../pipes/run.js';
import type { ReadScope } from './read-scope.js';

export type { SortTerm };

/**
 * Dialect-neutral plans: what the query layer asks of an event store. Each backend
 * compiles them to its own SQL. Times are Unix milliseconds; ranges are [from, to).
 */
export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

interface Base {
  filter: FilterNode;
  range: TimeWindow;
  /** The events this read may see: ANDed into `filter` by the store (read-scope.ts). */
  scope: ReadScope;
}

export interface SearchPlan extends Base {
  kind: 'search';
  sort: SortTerm[];
  limit: number;
  offset: number;
  /** Count every match (the page's total); false when re-paging a known total. */
  count: boolean;
}

export interface TopNPlan extends Base {
  kind: 'topn';
  field: string;
  n: number;
}

export interface LastNPlan extends Base {
  kind: 'lastn';
  field: string;
  n: number;
}

export const METRIC_OPS = [
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'count_distinct',
  'p50',
  'p90',
  'p99',
] as const;
export type MetricOp = (typeof METRIC_OPS)[number];

export interface Metric {
  op: MetricOp;
  field?: string;
}

/** The result key of a metric: `count`, or `<op>_<field>` (e.g. `avg_bytes`). */
export const metricKey = (m: { op: string; field?: string }) => (m.field ? `${m.op}_${m.field}` : m.op);

export interface SummaryPlan extends Base {
  kind: 'summary';
  groupBy: string[];
  metrics: Metric[];
  n: number;
}

export interface TimelinePlan extends Base {
  kind: 'timeline';
  intervalMs: number;
  splitBy?: string;
  /** Series kept by name; the rest are summed as `other`. */
  series: number;
}

/**
 * Patterns (docs/api/patterns.md): the `n` most common `pattern_id`s with their counts, first and last
 * event, counts in `buckets` equal slices of the range, up to 3 samples (the newest), and,
 * with `compareTo`, their counts in that earlier range.
 */
export interface PatternsPlan extends Base {
  kind: 'patterns';
  n: number;
  buckets: number;
  compareTo?: TimeWindow;
}

/** The width of one of a patterns plan's buckets (ms): the range in `buckets` equal slices. */
export const bucketWidth = (plan: PatternsPlan) =>
  Math.max(1, Math.ceil((plan.range.toMs - plan.range.fromMs) / plan.buckets));

/**
 * What changed (docs/api/explain.md): each candidate's events in the focus window (`range`) and in
 * `baseline` (the two never overlap) — every `pattern_id`, and for each of `fields` the
 * `top` most common values of each window — scored (core/change-score.ts), at most `n`
 * of those scoring `minScore` or more listed, with samples of the patterns listed.
 * `fields` null: the default set, read from the focus window's events.
 */
export interface ChangesPlan extends Base {
  kind: 'changes';
  baseline: TimeWindow;
  fields: string[] | null;
  n: number;
  minScore: number;
}

/** Values of each field a changes plan compares, per window. */
export const CHANGE_VALUES = 100;

/** Table (docs/query-language.md#table): the query's pipes, run in the store over the matching events. */
export interface TablePlan extends Base {
  kind: 'table';
  program: Program;
}

/**
 * Fields (the field list, features/events): the newest `sample` matches (by `ts`, then
 * `ev_id`), and of each field present in them its count, type and `top` most common
 * values, as the events' JSON representation has them (fields-shaper.ts).
 */
export interface FieldsPlan extends Base {
  kind: 'fields';
  sample: number;
  top: number;
}

export type QueryPlan =
  | SearchPlan
  | TopNPlan
  | LastNPlan
  | SummaryPlan
  | TimelinePlan
  | PatternsPlan
  | TablePlan
  | FieldsPlan
  | ChangesPlan;

/** A plan before its scope is given (what a query type builds; the runner adds its job's scope). */
export type UnscopedPlan = QueryPlan extends infer P
  ? P extends QueryPlan
    ? Omit<P, 'scope'>
    : never
  : never;

export interface SearchResult {
  total: number;
  events: StoredEvent[];
  /** The position of `events[0]` among all matches (0 unless a later page was fetched). */
  eventsOffset?: number;
}

export interface TopNResult {
  /** Matching events that have the field. */
  total: number;
  items: Array<{ value: string; count: number }>;
}

export interface LastNResult {
  items: Array<{ value: string; lastSeen: number; firstSeen: number; count: number }>;
}

export interface SummaryResult {
  totals: Record<string, number | null>;
  details: Array<{ group: Record<string, string | null>; metrics: Record<string, number | null> }>;
}

export interface TimelineResult {
  /** Bucket start (ms) → count and, with splitBy, counts per series value. */
  buckets: Array<{ startMs: number; count: number; series?: Record<string, number> }>;
}

export interface PatternsResult {
  /** Matching events that have a pattern. */
  total: number;
  items: Array<{
    patternId: string;
    /** Its template's text, added by the patterns component (features/patterns). */
    template?: string;
    count: number;
    firstSeen: number;
    lastSeen: number;
    series: number[];
    samples: Array<{ evId: string; ts: number; message: string | null }>;
    /** Its count in `compareTo`, when asked. */
    previousCount?: number;
    /**
     * Added where the patterns component groups one template text's ids into one item
     * (features/patterns/grouped-patterns.ts): every id of the text, most common first,
     * the apps its readable events came from (most first, at most a few, `appsOther`
     * more) and, without `compareTo`, whether none of its ids has a readable matching
     * event before the range.
     */
    patternIds?: string[];
    apps?: Array<{ app: string; count: number }>;
    appsOther?: number;
    firstInRange?: boolean;
  }>;
}

export interface TableResult {
  columns: Array<{ name: string; type: ColType }>;
  /** Cells in column order: text, numbers (times in Unix seconds) or null. */
  rows: Cell[][];
  /** Rows the pipes produced, before the cut at MAX_TABLE_ROWS. */
  totalRows: number;
}

/** A field's type in a field list: the kind of its column, else that of every value it has. */
export type FieldType = 'string' | 'number' | 'ip' | 'time';

export interface FieldSummary {
  /** Dotted name, as queries use it. */
  name: string;
  type: FieldType;
  /** Sampled events that have the field (not null). */
  count: number;
  /** Its most common values, most common first (none for times). */
  top: Array<{ value: string | number | boolean; count: number }>;
}

export interface FieldsResult {
  /** Events that matched. */
  total: number;
  /** Events looked at: the newest `sample` of them. */
  events: number;
  /** Most common first. */
  fields: FieldSummary[];
}

/** A candidate of a changes plan: a pattern (`field` null, `value` its id) or a field's value. */
export interface ChangeCandidate {
  field: string | null;
  value: string | number;
  focusCount: number;
  baselineCount: number;
  score: number;
  /** Patterns listed: the newest readable events of the focus window (the baseline's when gone). */
  samples?: Array<{ evId: string; ts: number; message: string | null }>;
  /** A pattern's template text, added by the patterns component (features/patterns). */
  template?: string;
}

export interface ChangesResult {
  focusTotal: number;
  baselineTotal: number;
  /** The fields examined. */
  fields: string[];
  /** Candidates examined. */
  tested: number;
  /** The listed ones, in order. */
  changes: ChangeCandidate[];
}

export interface PlanResults {
  search: SearchResult;
  topn: TopNResult;
  lastn: LastNResult;
  summary: SummaryResult;
  timeline: TimelineResult;
  patterns: PatternsResult;
  table: TableResult;
  fields: FieldsResult;
  changes: ChangesResult;
}

export type ResultOf<P extends QueryPlan> = PlanResults[P['kind']];

/** A running statement can be stopped through this. */
export interface ExecOptions {
  signal?: AbortSignal;
  /** Called with the engine's progress (0..1) while the statement runs. */
  onProgress?: (fraction: number) => void;
  /**
   * Names the statements of one piece of work (a query job's id): another node that takes
   * the work over stops what is left of them on a shared engine (`EventStore.abandon`).
   */
  tag?: string;
}
