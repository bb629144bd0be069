import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { NormalisedEvent, StoredEvent } from '../../core/event.js';
import { isNoSpaceError, storageFull } from '../../errors/errors.js';
import type { FilterNode } from '../../filter/ast.js';
import type { BackupOpen, BackupSnapshot, BackupStep, BackupStepResult } from '../backup-store.js';
import type {
  ColdFileRecord,
  ColdImport,
  ColdImportResult,
  ColdMove,
  ColdMoveResult,
  ColdVerify,
  ColdVerifyResult,
  EngineEventStore,
  EventStoreStats,
  ReadReach,
} from '../event-store.js';
import type { ExecOptions, QueryPlan, ResultOf, SearchPlan, TimeWindow } from '../query-plan.js';
import { type ReadScope, type StreamRules, SYSTEM_SCOPE, scopedFilter } from '../read-scope.js';
import type { MetricRule } from '../rollups/metric-rollups.js';
import type {
  CoveredRange,
  MetricBackfill,
  MetricBackfillResult,
  MetricBucketRow,
  MetricBucketsRead,
  MetricTotalRow,
  MetricUpkeep,
} from '../rollups/metric-store.js';
import { SqlParams } from '../sql/sql-params.js';
import { StoreRuntime } from '../store-runtime.js';
import { ColdFiles } from './cold-files.js';
import { ColdMover } from './cold-mover.js';
import { ColdOps } from './cold-ops.js';
import { DuckDBInstance } from './duckdb-api.js';
import { DuckDbAppends, openAppender, type TableAppender } from './duckdb-appends.js';
import { DuckDbBackups } from './duckdb-backup.js';
import type { DuckDbDatabase } from './duckdb-database.js';
import { duckDbDialect } from './duckdb-dialect.js';
import { compileFilter, registerFilterFunctions } from './duckdb-filter-compiler.js';
import { DuckDbMaintenance } from './duckdb-maintenance.js';
import { DuckDbReads } from './duckdb-reads.js';
import { CREATE_EVENTS, upgradeEventsTable } from './duckdb-schema.js';
import type { DuckDbStatement } from './duckdb-statements.js';
import { FieldColumns } from './field-columns.js';
import { MetricBuckets } from './metric-buckets.js';
import { type Bound, StatementGate } from './statement-gate.js';
import { StreamSets } from './stream-sets.js';
import { WordIndex } from './word-index.js';

/**
 * Events whose stream membership one statement writes under new rules (ADR 0016): an
 * append waits for at most one such part (the bench's million events took 0.5 s).
 */
const MEMBERSHIP_PART_EVENTS = 2_000_000;

export interface DuckDbEventStoreOptions {
  /** Directory holding `events.duckdb`; `:memory:` for a throw-away store. */
  dataDir: string;
  /** DuckDB `memory_limit`, e.g. `512MB`. */
  memoryLimit: string;
  /** DuckDB `checkpoint_threshold`: WAL size that triggers a checkpoint, e.g. `256MB`. */
  checkpointThreshold: string;
  /** The cold tier's directory (ADR 0031); none: no cold tier. */
  coldDir?: string;
  /** Events per window when streaming a time-sorted search (default 100,000). */
  streamWindowEvents?: number;
  /** Events per part when writing stream membership under new rules (default MEMBERSHIP_PART_EVENTS). */
  membershipPartEvents?: number;
  threads?: number;
  /**
   * Whether queries use the word index (ADR 0004; default true). It is kept either way,
   * so a store can be reopened with it; false is for tests and measurements.
   */
  wordIndex?: boolean;
}

/**
 * The embedded event store (ADR 0006): its dialect (duckdb-dialect.ts) run by the store
 * runtime, and its parts by concern, each holding the open database: reads (the
 * dialect's driver, duckdb-reads.ts), appends (duckdb-appends.ts) and maintenance
 * (checkpoints, retention, stats and health, duckdb-maintenance.ts). Here, opening the
 * database and closing it in order.
 */
export class DuckDbEventStore implements EngineEventStore {
  readonly kind = 'duckdb' as const;
  readonly capabilities = { interrupt: true, re2: true };
  /**
   * Extra fields in columns of their own (field-columns.ts, ADR 0017); public for SQL
   * written outside the store (tests, the benchmarks' raw side) that reads such fields.
   */
  readonly extras: FieldColumns;
  /** Word index (ADR 0004): the blooms. */
  private readonly words: WordIndex;
  private readonly reads: DuckDbReads;
  private readonly runtime: StoreRuntime<DuckDbStatement>;
  private readonly maintenance: DuckDbMaintenance;
  private readonly appends: DuckDbAppends;
  /** The cold tier's mover; null without a cold directory. */
  private readonly mover: ColdMover | null;
  /** The cold tier's verify and import (cold-ops.ts); null without a cold directory. */
  private readonly coldOps: ColdOps | null;
  /** Online backups' snapshots (duckdb-backup.ts, ADR 0036). */
  private readonly backups: DuckDbBackups;
  /** The last cold tier write asked for (see `coldSerial`). */
  private coldTurn: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly db: DuckDbDatabase,
    table: TableAppender,
    opts: DuckDbEventStoreOptions,
  ) {
    this.extras = db.extras;
    this.words = db.words;
    this.reads = new DuckDbReads(db, opts.streamWindowEvents ?? 100_000, (fromMs, toMs) =>
      this.runtime.estimateInRange(fromMs, toMs),
    );
    this.runtime = new StoreRuntime(duckDbDialect(this.reads));
    this.maintenance = new DuckDbMaintenance(db, this.reads, this.runtime);
    this.mover = db.cold ? new ColdMover(db, db.cold, this.reads) : null;
    this.coldOps = db.cold ? new ColdOps(db, db.cold, this.reads) : null;
    this.backups = new DuckDbBackups(db);
    this.appends = new DuckDbAppends(
      db,
      table,
      this.maintenance,
      this.runtime,
      opts.membershipPartEvents ?? MEMBERSHIP_PART_EVENTS,
    );
  }

  static async open(opts: DuckDbEventStoreOptions): Promise<DuckDbEventStore> {
    try {
      return await DuckDbEventStore.openNow(opts);
    } catch (err) {
      // One clear line instead of the engine's text (the CLI prints an AppError's message).
      if (isNoSpaceError(err))
        throw storageFull(
          `The event store in ${opts.dataDir} cannot be opened: no space left on its disk (recovering its write-ahead log needs room). Free some space and start again.`,
        );
      throw err;
    }
  }

  private static async openNow(opts: DuckDbEventStoreOptions): Promise<DuckDbEventStore> {
    let file: string | null = null;
    if (opts.dataDir !== ':memory:') {
      mkdirSync(opts.dataDir, { recursive: true });
      file = path.join(opts.dataDir, 'events.duckdb');
    }
    const instance = await DuckDBInstance.create(file ?? ':memory:', {
      memory_limit: opts.memoryLimit,
      // A checkpoint runs inside a commit and blocks it; larger, rarer checkpoints keep
      // ack latency flat under sustained ingest (measured: p99 860 → 275 ms).
      checkpoint_threshold: opts.checkpointThreshold,
      ...(opts.threads ? { threads: String(opts.threads) } : {}),
      // DuckDB's allocator gives freed memory back to the system from a thread of its own,
      // not only when a large query ends (the abuse bench, two runs each: RSS after storing
      // 2,000 records of 999 fields 549-666 → 487-502 MiB; six sorted reports over them
      // after it peaked at 1,123-1,136 MiB instead of 1,183-1,235).
      allocator_background_threads: 'true',
      // A new store's file in DuckDB's newest format, which the message's ZSTD needs (ADR
      // 0033); a file made before keeps the format it was made in.
      storage_compatibility_version: 'latest',
    });
    const writer = await instance.connect();
    // The cold tier's files are written once and never changed in place (ADR 0031): their
    // footers are parsed once, not by every statement that opens them (ADR 0032). Set
    // once the instance is open (the Parquet reader is loaded then).
    await writer.run('SET GLOBAL parquet_metadata_cache = true');
    await writer.run(CREATE_EVENTS);
    await upgradeEventsTable(writer);
    await writer.run(DuckDbBackups.TABLE);
    const reader = await instance.connect();
    registerFilterFunctions(reader);
    // The writer compiles stream rules too (stream-sets.ts).
    registerFilterFunctions(writer);
    // Word index (ADR 0004): created, or loaded into memory, before the first append.
    const words = await WordIndex.open(writer);
    const extras = await FieldColumns.open(writer);
    const table = await openAppender({ writer, extras });
    const db: DuckDbDatabase = {
      instance,
      writer,
      reader,
      gate: new StatementGate(),
      file,
      words,
      useWords: opts.wordIndex ?? true,
      sets: await StreamSets.open(writer, extras.columnOf),
      extras,
      metrics: await MetricBuckets.open(writer),
      // The cold tier's records, and what a crash left half moved cleaned up, before any read.
      cold: opts.coldDir ? await ColdFiles.open(writer, opts.coldDir) : null,
    };
    const store = new DuckDbEventStore(db, table, opts);
    await store.runtime.loadHistogram();
    // A WAL left by the last run (a kill, or a store a fatal error stopped) is written into
    // the main file soon, as after appends: its replayed rows sit in memory until then.
    store.maintenance.checkpointWhenIdle();
    return store;
  }

  append(events: readonly NormalisedEvent[]): Promise<{ storedAt: number }> {
    return this.appends.append(events);
  }

  setStreamRules(rules: StreamRules): Promise<void> {
    return this.appends.setStreamRules(rules);
  }

  setMetricRules(rules: readonly MetricRule[]): Promise<void> {
    return this.appends.setMetricRules(rules);
  }

  async metricBuckets(read: MetricBucketsRead): Promise<MetricBucketRow[]> {
    return this.db.metrics.read((sql, params) => this.runSql(sql, params), read);
  }

  async metricCounts(metric: number, generation: number): Promise<{ series: number; dropped: number }> {
    return this.db.metrics.counts(metric, generation);
  }

  async metricTotals(metric: number, generation: number, scope: ReadScope): Promise<MetricTotalRow[]> {
    return this.db.metrics.totals((sql, params) => this.runSql(sql, params), metric, generation, scope);
  }

  maintainMetrics(nowMs: number): Promise<MetricUpkeep> {
    return this.appends.maintainMetrics(nowMs);
  }

  /**
   * Reads the window's events (both tiers, as a query reads them) outside the append
   * queue, pre-aggregated by their raw label tuples; the queue's turn then admits the
   * tuples and writes the rows with the covered range (metric-buckets.ts).
   */
  async backfillMetric(req: MetricBackfill): Promise<MetricBackfillResult> {
    const counted = this.db.metrics.backfillBatch(req.rule);
    const events = this.stream({
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: req.rule.filter,
      range: { fromMs: req.fromMs, toMs: req.toMs },
      sort: [],
      limit: Number.MAX_SAFE_INTEGER,
      offset: 0,
      count: false,
    });
    let n = 0;
    for await (const e of events) {
      if (e.stored_at >= req.storedBefore) continue; // counted at ingest
      counted.add(e);
      n++;
    }
    return this.appends.writeBackfill(req, counted.take(), n);
  }

  metricBackfilled(metric: number, generation: number): Promise<CoveredRange[]> {
    return this.db.metrics.backfilled((sql, params) => this.runSql(sql, params), metric, generation);
  }

  /** Runs a plan (store-runtime.ts): each statement on its own connection, interrupted by the signal. */
  execute<P extends QueryPlan>(plan: P, opts: ExecOptions = {}): Promise<ResultOf<P>> {
    return this.runtime.execute(plan, opts);
  }

  /**
   * Streams every event a search matches, in its order, a chunk at a time, so an export
   * of a million rows never holds them all in memory.
   */
  stream(plan: SearchPlan, opts: ExecOptions = {}): AsyncGenerator<StoredEvent> {
    return this.runtime.stream(plan, opts);
  }

  getById(evId: string, scope: ReadScope): Promise<StoredEvent | null> {
    return this.runtime.getById(evId, scope);
  }

  /** The per-hour counts behind estimateInRange (hour start ms, events). */
  hourCounts(): Array<[number, number]> {
    return this.runtime.hourCounts();
  }

  estimateInRange(fromMs: number, toMs: number): number {
    return this.runtime.estimateInRange(fromMs, toMs);
  }

  appendedElsewhere(count: number, fromMs: number, toMs: number): void {
    this.runtime.appendedElsewhere(count, fromMs, toMs);
  }

  /** Retention over both tiers: the cold files' events first (ADR 0031), then the hot ones. */
  async deleteOlderThan(tsMs: number, keep?: FilterNode): Promise<number> {
    const mover = this.mover;
    const cold = mover ? await this.coldSerial(() => mover.expire(tsMs, keep)) : 0;
    return cold + (await this.maintenance.deleteOlderThan(tsMs, keep));
  }

  setPatternIds(range: TimeWindow, ids: ReadonlyArray<readonly [string, string]>): Promise<void> {
    return this.maintenance.setPatternIds(range, ids);
  }

  stats(): Promise<EventStoreStats> {
    return this.maintenance.stats();
  }

  async moveCold(move: ColdMove): Promise<ColdMoveResult | null> {
    const mover = this.mover;
    if (!mover) return null;
    return this.coldSerial(() => mover.move(move));
  }

  async dropOldestCold(bytes: number): Promise<{ events: number; bytes: number }> {
    const mover = this.mover;
    if (!mover) return { events: 0, bytes: 0 };
    // In turn with the other writers: it removes the files an earlier call forgot, and
    // their folders, which a move may be writing a part into.
    const dropped = await this.coldSerial(() => mover.dropOldest(bytes));
    if (dropped.events) await this.runtime.loadHistogram();
    return dropped;
  }

  async coldFiles(): Promise<ColdFileRecord[]> {
    return [...(this.db.cold?.all() ?? [])];
  }

  async verifyCold(req: ColdVerify): Promise<ColdVerifyResult | null> {
    return this.coldOps ? this.coldOps.verify(req) : null;
  }

  async importCold(req: ColdImport): Promise<ColdImportResult | null> {
    const ops = this.coldOps;
    return ops ? this.coldSerial(() => ops.import(req)) : null;
  }

  /**
   * The cold tier's writers one at a time: a move, retention's rewrites and an import each
   * pick the next part of a stream-day and the next record id before they commit, and
   * retention's removals take emptied folders away.
   */
  private coldSerial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.coldTurn.then(work, work);
    this.coldTurn = run.catch(() => undefined);
    return run;
  }

  /**
   * Pinned in the cold tier's turn and then the write turn (ADR 0036): no move, retention
   * rewrite, import, append or delete commits until `releaseBackup`.
   */
  openBackup(req: BackupOpen): Promise<BackupSnapshot> {
    return new Promise((resolve, reject) => {
      this.coldSerial(() => this.db.gate.write(() => this.backups.pin(req, resolve))).catch(reject);
    });
  }

  async releaseBackup(id: string): Promise<boolean> {
    return this.backups.release(id);
  }

  backupStep(id: string, step: BackupStep): Promise<BackupStepResult> {
    return this.backups.step(id, step);
  }

  async interruptBackup(id: string): Promise<void> {
    this.backups.interrupt(id);
  }

  closeBackup(id: string): Promise<void> {
    return this.backups.close(id);
  }

  async countHot(filters: readonly FilterNode[]): Promise<number[]> {
    if (!filters.length) return [];
    const params = new SqlParams(undefined, this.db.extras.columnOf);
    const counts = filters.map(
      (f, i) => `count(*) FILTER (WHERE coalesce((${compileFilter(f, params)}), false)) AS c${i}`,
    );
    const [row] = await this.runSql(`SELECT ${counts.join(', ')} FROM events`, params.values);
    return filters.map((_, i) => Number(row?.[`c${i}`] ?? 0));
  }

  /**
   * The word index's part only for a reader of every event: a block holds events of every
   * stream, so whether any block may hold a word would tell a reader of some streams of
   * events they may not read (a word in another stream's messages).
   */
  async readReach(filter: FilterNode, scope: ReadScope, range: TimeWindow): Promise<ReadReach> {
    return this.reads.readReach(scopedFilter(scope, filter), range, scope.filter === null);
  }

  /**
   * Runs SQL on the read connection and returns plain row objects. For benchmarks (the
   * raw-engine side) and tests; the API never passes user text here.
   */
  async runSql(sql: string, params: readonly Bound[] = []): Promise<Record<string, unknown>[]> {
    return (await this.reads.onReader(sql, params)).getRowObjectsJS() as Record<string, unknown>[];
  }

  /**
   * Writes the WAL into the main file (measurements of size; shutdown; idle). Refused with
   * storage_full when the disk has no room for it.
   */
  checkpoint(): Promise<void> {
    return this.maintenance.checkpoint();
  }

  /** Nothing runs elsewhere: the store is this process's, and so are its statements. */
  async abandon(_tagPrefix: string): Promise<void> {}

  /** Fails while the store cannot answer, or cannot write for lack of space. */
  ping(): Promise<void> {
    return this.maintenance.ping();
  }

  async close(): Promise<void> {
    this.appends.stopQueuing();
    await this.reads.settle();
    await this.appends.settled();
    // What the log metrics' sketches saw since the upkeep's last run.
    await this.db.gate.write(() => this.db.metrics.flushSketches(this.db.writer)).catch(() => undefined);
    await this.maintenance.stop();
    this.reads.closeIdle();
    this.appends.closeSync();
    this.words.close(); // word index: its appender
    this.db.reader.closeSync();
    this.db.writer.closeSync();
    this.db.instance.closeSync();
  }
}
