import type { NormalisedEvent, StoredEvent } from '../core/event.js';
import type { FilterNode } from '../filter/ast.js';
import type { BackupStore } from './backup-store.js';
import type { ExecOptions, QueryPlan, ResultOf, SearchPlan, TimeWindow } from './query-plan.js';
import type { ReadScope, StreamRules } from './read-scope.js';
import type { MetricRule } from './rollups/metric-rollups.js';
import type {
  CoveredRange,
  MetricBackfill,
  MetricBackfillResult,
  MetricBucketRow,
  MetricBucketsRead,
  MetricTotalRow,
  MetricUpkeep,
} from './rollups/metric-store.js';
import type { SqlValue } from './sql/sql-params.js';

/** What a backend can do, so callers choose a strategy without knowing the engine. */
export interface EventStoreCapabilities {
  /** Running statements can be interrupted (DuckDB interrupt, ClickHouse KILL QUERY). */
  readonly interrupt: boolean;
  /** Regular expressions are RE2 inside the engine. */
  readonly re2: boolean;
}

export interface EventStoreStats {
  /** Events in the hot tier (all of them on a store without a cold tier). */
  events: number;
  /** Bytes the store occupies on disk (0 when unknown). */
  bytesOnDisk: number;
  /**
   * Bytes its events take: without the free space deletes left in the file (DuckDB keeps
   * and reuses it). What `retentionMaxBytes` is compared with.
   */
  dataBytes: number;
  /**
   * The oldest and newest event time over both tiers (ADR 0031), null when the store holds
   * none: a read of the store's whole span (an event's context) reaches every event.
   */
  oldestTs: number | null;
  newestTs: number | null;
}

/**
 * One call of the cold tier's mover (ADR 0031): the events older than `cutMs` that `keep`
 * does not match (the events of streams kept hot longer) move, each filed under its home,
 * the first of `homes` (the streams other than Default, in id order) whose filter matches
 * it, else `defaultId`. All times are Unix milliseconds.
 */
export interface ColdMove {
  readonly cutMs: number;
  readonly keep?: FilterNode;
  readonly homes: ReadonlyArray<{ readonly id: number; readonly filter: FilterNode }>;
  readonly defaultId: number;
  readonly nowMs: number;
}

export interface ColdMoveResult {
  files: number;
  events: number;
  /** Stream-days that could not move (left hot, tried again next round), each with why. */
  errors: string[];
}

/**
 * The cold files a read meets (ADR 0031): those whose time range meets its range, those
 * their summaries let it skip, those it opens, and the bytes of the latter.
 */
export interface ColdReach {
  files: number;
  files_skipped: number;
  files_read: number;
  bytes_read: number;
}

/**
 * How a read meets the hot tier's word index (ADR 0004), in a query's statistics: `index`,
 * the index alone answered (no block may hold what the filter requires: nothing read);
 * `narrowed`, only the time ranges of the candidate blocks were read; `scan`, every event
 * of the range was read, `why` saying why: `no_indexed_term` (the filter requires no word
 * or field value the index keeps: a negation, a range of numbers...), `too_many_candidates`
 * (the candidates' ranges would cost more than the scan), `index_off`.
 */
export interface IndexReach {
  path: 'index' | 'narrowed' | 'scan';
  why: 'no_indexed_term' | 'too_many_candidates' | 'index_off' | null;
  /** The index's blocks the range meets, and of those, the candidates. */
  blocks: number;
  candidate_blocks: number;
  /** The time ranges read (joined candidates); 0 on a scan or when nothing is read. */
  ranges: number;
}

/**
 * What a read meets of each tier: the word index of the hot one (null on an engine
 * without, and for a reader of only some streams), the cold files.
 */
export interface ReadReach {
  index: IndexReach | null;
  cold: ColdReach | null;
}

/** What `cold verify` found wrong with one file (docs/operations/cold-tier.md). */
export interface ColdProblem {
  /** Relative to the cold directory, `/`-separated. */
  readonly path: string;
  readonly problem: 'missing' | 'size' | 'checksum' | 'unreadable' | 'rows' | 'time_range' | 'not_recorded';
  readonly detail: string;
}

/** One `cold verify` (ADR 0031): every record against its file, every file against the records. */
export interface ColdVerify {
  readonly streamId?: number;
  readonly checksums: boolean;
}

export interface ColdVerifyResult {
  /** Records checked, their rows and bytes as recorded. */
  files: number;
  events: number;
  bytes: number;
  problems: ColdProblem[];
}

/** One `cold import`: `path` relative to the cold directory (or absolute inside it). */
export interface ColdImport {
  readonly path: string;
  readonly streamId?: number;
  readonly defaultId: number;
  /** The streams that exist: a path or metadata naming another is passed over. */
  readonly streamIds: readonly number[];
  readonly nowMs: number;
}

export interface ColdImportResult {
  files: Array<{ path: string; status: 'imported' | 'present' | 'refused'; events: number; detail: string }>;
  /** Events imported. */
  events: number;
}

/** A committed file of the cold tier, as recorded (times in Unix milliseconds). */
export interface ColdFileRecord {
  readonly id: number;
  readonly streamId: number;
  /** The UTC day of every row's `ts`, `YYYY-MM-DD`. */
  readonly day: string;
  readonly part: number;
  /** Relative to the cold directory, `/`-separated. */
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
  readonly minTs: number;
  readonly maxTs: number;
  readonly minEvId: string;
  readonly maxEvId: string;
  readonly sha256: string;
  readonly createdAt: number;
  /** Bytes of its skipping summary (0: none). */
  readonly summaryBytes: number;
}

/**
 * The event storage contract. Backends: DuckDB (embedded default) and ClickHouse
 * (`eventStoreUrl`), chosen by `openEventStore` (open-event-store.ts).
 * All times are Unix milliseconds.
 */
export interface EventStore extends BackupStore {
  readonly kind: 'duckdb' | 'clickhouse';
  readonly capabilities: EventStoreCapabilities;
  /**
   * Appends a batch durably (committed before the promise resolves) and returns the
   * `stored_at` it gave every event of the batch.
   */
  append(events: readonly NormalisedEvent[]): Promise<{ storedAt: number }>;
  /**
   * Runs a query plan within its scope (`plan.scope`, applied by plan-executor.ts);
   * aborting `opts.signal` interrupts the engine's work.
   */
  execute<P extends QueryPlan>(plan: P, opts?: ExecOptions): Promise<ResultOf<P>>;
  /** Every event a search matches within its scope, in order, streamed (exports). */
  stream(plan: SearchPlan, opts?: ExecOptions): AsyncGenerator<StoredEvent>;
  /**
   * About how many events lie in a time range, ignoring filters, from an in-memory
   * histogram (no query): sizes query slices at no cost.
   */
  estimateInRange(fromMs: number, toMs: number): number;
  /**
   * Another process appended `count` events with times in [fromMs, toMs] to the same store
   * (a cluster node's commit): counted in the histogram behind `estimateInRange`.
   */
  appendedElsewhere(count: number, fromMs: number, toMs: number): void;
  /**
   * The streams' rules, from which read scopes are made (ADR 0016). A store may keep each
   * event's membership of them and read scopes made under the same rules by it; resolves
   * once the stored events have it (at once for a store that keeps none).
   */
  setStreamRules(rules: StreamRules): Promise<void>;
  /**
   * The log metrics to count (ADR 0035): an append that completes after this resolves
   * counts its events by them, in the transaction that stores them; buckets of metrics not
   * among them (deleted, or of an older generation) are deleted.
   */
  setMetricRules(rules: readonly MetricRule[]): Promise<void>;
  /** A metric's buckets summed by step, stream set and label tuple; null: this store does not count. */
  metricBuckets(read: MetricBucketsRead): Promise<MetricBucketRow[] | null>;
  /** A metric's figures since counting began, by stream set and label tuple, of the sets `scope` reads; null: this store does not count. */
  metricTotals(metric: number, generation: number, scope: ReadScope): Promise<MetricTotalRow[] | null>;
  /**
   * The buckets' upkeep (ADR 0035): those past their metric's retention leave the series
   * (their counts kept for the totals), and a bucket's rows (an append's each) merge into one.
   */
  maintainMetrics(nowMs: number): Promise<MetricUpkeep>;
  /**
   * Counts one backfill window into the metric's buckets with the range it covers, in one
   * transaction (an event counts once, across a crash too); null: this store does not count.
   */
  backfillMetric(req: MetricBackfill): Promise<MetricBackfillResult | null>;
  /** The ranges backfills covered for a metric's generation, merged and in order. */
  metricBackfilled(metric: number, generation: number): Promise<CoveredRange[]>;
  /** A metric's label tuples with a series of their own, and those folded into `__other__`. */
  metricCounts(metric: number, generation: number): Promise<{ series: number; dropped: number }>;
  /** One event by id, or null, as well when it lies outside `scope`. */
  getById(evId: string, scope: ReadScope): Promise<StoredEvent | null>;
  /**
   * Deletes events whose `ts` is older than the cut-off, except those `keep` matches (the
   * events of streams kept longer: retention per stream); returns how many.
   */
  deleteOlderThan(tsMs: number, keep?: FilterNode): Promise<number>;
  /**
   * Gives stored events new `pattern_id`s (re-mining, docs/api/patterns.md): each pair is
   * an event's `ev_id` and its new id, every such event lying in `range` by its `ts` (which
   * narrows the engine's scan). Ids not stored are skipped. Resolves once the events read
   * back with their new ids.
   */
  setPatternIds(
    range: TimeWindow,
    ids: ReadonlyArray<readonly [evId: string, patternId: string]>,
  ): Promise<void>;
  /**
   * Stops the statements still running whose tag (`ExecOptions.tag`) starts with
   * `tagPrefix`, on every server of a shared engine: the work of a node that died, taken
   * over by this one. Nothing to do for an embedded engine (its statements ended with
   * their process).
   */
  abandon(tagPrefix: string): Promise<void>;
  /**
   * Moves events into the cold tier (ADR 0031); null when the store has none (ClickHouse,
   * or no cold directory).
   */
  moveCold(move: ColdMove): Promise<ColdMoveResult | null>;
  /**
   * Deletes whole cold files, oldest first, until at least `bytes` are freed
   * (`retentionMaxBytes` over both tiers); returns the events and bytes they held.
   */
  dropOldestCold(bytes: number): Promise<{ events: number; bytes: number }>;
  /** The cold tier's committed files, oldest first (none without a cold tier). */
  coldFiles(): Promise<ColdFileRecord[]>;
  /** Checks the cold tier's records and files, changing nothing; null without a cold tier. */
  verifyCold(req: ColdVerify): Promise<ColdVerifyResult | null>;
  /** Records Parquet files placed under the cold directory; null without a cold tier. */
  importCold(req: ColdImport): Promise<ColdImportResult | null>;
  /**
   * How many events of the hot tier (all time) each filter matches, in one read: the
   * streams' tier figures (docs/operations/cold-tier.md). Every event is hot on a store
   * without a cold tier.
   */
  countHot(filters: readonly FilterNode[]): Promise<number[]>;
  /** The cold files a read of `filter` within `scope` over `range` meets; null when none. */
  /** How a read of `filter` within `scope` over `range` meets the word index and the cold files. */
  readReach(filter: FilterNode, scope: ReadScope, range: TimeWindow): Promise<ReadReach>;
  stats(): Promise<EventStoreStats>;
  /** Fails when the store cannot answer (for /api/health). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An engine's own store, as the event-store worker serves it (store-worker.ts): the
 * contract, and what tests, benchmarks and the worker's proxy ask of an engine beyond it.
 */
export interface EngineEventStore extends EventStore {
  /** The per-hour counts behind `estimateInRange` (hour start ms, events). */
  hourCounts(): Array<[number, number]>;
  /** Runs raw SQL with its values and returns its rows: tests and benchmarks only. */
  runSql(sql: string, params: readonly SqlValue[]): Promise<Record<string, unknown>[]>;
  /**
   * Writes the engine's write-ahead log into its main file, where it keeps one of its own
   * (DuckDB); absent otherwise.
   */
  checkpoint?(): Promise<void>;
}

/** The error every store throws for a statement stopped through its `signal`. */
export function abortError(): Error {
  const err = new Error('The query was stopped.');
  err.name = 'AbortError';
  return err;
}
