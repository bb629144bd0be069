import { mkdirSync, statfsSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  type DuckDBAppender,
  type DuckDBConnection,
  DuckDBDataChunk,
  DuckDBInstance,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { decodeTime } from 'ulidx';
import type { NormalisedEvent, StoredEvent } from '../../core/event.js';
import {
  isNoSpaceError,
  isOutOfMemoryError,
  outOfMemory,
  storageFull,
  unavailable,
} from '../../errors/errors.js';
import type { FilterNode } from '../../filter/ast.js';
import { abortError, type EventStore, type EventStoreStats } from '../event-store.js';
import { HourHistogram } from '../hour-histogram.js';
import { type Driver, executePlan } from '../plan-executor.js';
import type { ExecOptions, QueryPlan, ResultOf, SearchPlan, TimeWindow } from '../query-plan.js';
import { inScope, type ReadScope, type StreamRules, scopedPlan } from '../read-scope.js';
import { SqlParams, sqlTime } from '../sql/sql-params.js';
import { compileFilter, registerFilterFunctions } from './duckdb-filter-compiler.js';
import { type Compiled, duckDbDialect, type Reach, searchRowsSql } from './duckdb-plans.js';
import {
  appendValues,
  CREATE_EVENTS,
  duckDbValue,
  fromTs,
  rowToEvent,
  type TableOrder,
  tableOrder,
  tsValue,
  upgradeEventsTable,
} from './duckdb-schema.js';
import { FieldColumns } from './field-columns.js';
import { type Bound, StatementGate } from './statement-gate.js';
import { StreamSets } from './stream-sets.js';
import { blockSlices, buildWordBlocks } from './word-blocks.js';
import { WordIndex } from './word-index.js';

const HOUR_MS = 3_600_000;

/** Below this much free space on the data dir's file system the store reports itself full. */
export const MIN_FREE_BYTES = 256 * 1024;

/**
 * Room a checkpoint needs beyond the WAL's size (which bounds the data it writes: the WAL
 * holds the rows uncompressed) for the blocks' metadata and the rewritten headers.
 */
const CHECKPOINT_HEADROOM_BYTES = 4 * 1024 * 1024;

/** Appends paused this long: a WAL this large or more is checkpointed (`checkpointWhenIdle`). */
export const IDLE_CHECKPOINT_MS = 2_000;
export const IDLE_CHECKPOINT_WAL_BYTES = 8 * 1024 * 1024;

/**
 * Events whose stream membership one statement writes under new rules (ADR 0016): an
 * append waits for at most one such part (the bench's million events took 0.5 s).
 */
const MEMBERSHIP_PART_EVENTS = 2_000_000;

/** DuckDB's vector size: a data chunk holds at most this many rows. */
const CHUNK_ROWS = 2048;
/**
 * A search the word index narrows to at most this many events reads its page first and
 * counts only when the page is full (`fewMatches`): at 10 M events a rare word's page and
 * count side by side took 38 ms, its page alone 25. A page that comes back full costs the
 * count after it, over these few events.
 */
const FEW_MATCHES_EVENTS = 100_000;

export interface DuckDbEventStoreOptions {
  /** Directory holding `events.duckdb`; `:memory:` for a throw-away store. */
  dataDir: string;
  /** DuckDB `memory_limit`, e.g. `512MB`. */
  memoryLimit: string;
  /** DuckDB `checkpoint_threshold`: WAL size that triggers a checkpoint, e.g. `256MB`. */
  checkpointThreshold: string;
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

export class DuckDbEventStore implements EventStore {
  readonly kind = 'duckdb' as const;
  readonly capabilities = { interrupt: true, re2: true };
  private appendQueue: Promise<unknown> = Promise.resolve();
  /** Events per hour (start ms → count), kept current by appends: sizes query slices. */
  private readonly perHour = new HourHistogram();
  /** Idle query connections; each running statement has its own so it can be interrupted. */
  private readonly idle: DuckDBConnection[] = [];
  /** No write commits while a statement is planned (statement-gate.ts). */
  private readonly gate = new StatementGate();
  /**
   * Set when a write failed for lack of space (with the free bytes then), cleared by the
   * next write that succeeds or once the file system has room again: /api/health says so.
   */
  private full: { freeBytes: number } | null = null;
  /** Set after each append: the checkpoint once appends pause (`checkpointWhenIdle`). */
  private idleTimer: NodeJS.Timeout | null = null;
  /** The idle checkpoint while it runs (close waits for it). */
  private idleCheckpoint: Promise<void> | null = null;
  /**
   * Calls into DuckDB under way on read connections, each with its connection: `close`
   * interrupts them and waits, so no query completes into a thread that is gone.
   */
  private readonly busy = new Map<Promise<unknown>, DuckDBConnection>();
  /** Set when `close` starts: stream membership writes stop queuing steps. */
  private closing = false;
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
    private readonly reader: DuckDBConnection,
    /** The table's appender, its column types and order: new ones when a field gets a column. */
    private appender: DuckDBAppender,
    private types: DuckDBType[],
    private order: TableOrder,
    private readonly file: string | null,
    private readonly streamWindowEvents: number,
    private readonly membershipPartEvents: number,
    /** Word index (ADR 0004): the blooms, and whether queries use them. */
    private readonly words: WordIndex,
    private readonly useWords: boolean,
    /** Each event's stream membership (ADR 0016). */
    private readonly sets: StreamSets,
    /**
     * Extra fields in columns of their own (field-columns.ts, ADR 0017); public for SQL
     * written outside the store (tests, the benchmarks' raw side) that reads such fields.
     */
    readonly extras: FieldColumns,
  ) {}

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
    });
    const writer = await instance.connect();
    await writer.run(CREATE_EVENTS);
    await upgradeEventsTable(writer);
    const reader = await instance.connect();
    registerFilterFunctions(reader);
    // The writer compiles stream rules too (stream-sets.ts).
    registerFilterFunctions(writer);
    // Word index (ADR 0004): created, or loaded into memory, before the first append.
    const words = await WordIndex.open(writer);
    const extras = await FieldColumns.open(writer);
    const { appender, types, order } = await openAppender(writer, extras);
    const store = new DuckDbEventStore(
      instance,
      writer,
      reader,
      appender,
      types,
      order,
      file,
      opts.streamWindowEvents ?? 100_000,
      opts.membershipPartEvents ?? MEMBERSHIP_PART_EVENTS,
      words,
      opts.wordIndex ?? true,
      await StreamSets.open(writer, extras.columnOf),
      extras,
    );
    await store.loadHistogram();
    // A WAL left by the last run (a kill, or a store a fatal error stopped) is written into
    // the main file soon, as after appends: its replayed rows sit in memory until then.
    store.checkpointWhenIdle();
    return store;
  }

  append(events: readonly NormalisedEvent[]): Promise<{ storedAt: number }> {
    // One appender, one batch at a time: appends are serialised, not interleaved.
    const run = this.appendQueue.then(() => this.gate.write(() => this.appendNow(events)));
    this.appendQueue = run.catch(() => undefined);
    void run.then(
      () => this.checkpointWhenIdle(),
      () => undefined,
    );
    return run;
  }

  /**
   * Once appends pause for `IDLE_CHECKPOINT_MS`, a WAL of `IDLE_CHECKPOINT_WAL_BYTES` or
   * more is written into the main file: at rest the events sit compressed (the WAL holds
   * them row by row, 3-4 times the bytes) and a restart has little to replay. Under steady
   * ingest only `checkpoint_threshold` checkpoints, as before.
   */
  private checkpointWhenIdle(): void {
    if (this.file === null) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      let wal = 0;
      try {
        wal = statSync(`${this.file}.wal`).size;
      } catch {
        return; // no WAL: checkpointed already
      }
      if (wal >= IDLE_CHECKPOINT_WAL_BYTES && this.roomToCheckpoint())
        this.idleCheckpoint = this.checkpoint()
          .catch(() => undefined)
          .finally(() => {
            this.idleCheckpoint = null;
          });
    }, IDLE_CHECKPOINT_MS);
    this.idleTimer.unref();
  }

  /**
   * The streams' rules, whose membership each event keeps (ADR 0016): appends write it at
   * once, and the stored events get it a part at a time (about MEMBERSHIP_PART_EVENTS each,
   * appends taking turns with the parts); resolves once they all have it.
   */
  setStreamRules(rules: StreamRules): Promise<void> {
    if (!this.sets.use(rules)) return Promise.resolve();
    return this.writeMembership(rules).catch((err) => {
      throw this.writeError(err);
    });
  }

  private async writeMembership(rules: StreamRules): Promise<void> {
    // Each step in the append queue: between two appends, never inside one; none once the
    // store is closing (a step queued after `close` took the queue would meet it closed).
    const queued = (step: () => Promise<boolean>): Promise<boolean> => {
      const run = this.appendQueue.then(() => (this.closing ? false : this.gate.write(step)));
      this.appendQueue = run.catch(() => undefined);
      return run;
    };
    if (this.sets.stale(rules)) {
      if (!(await queued(() => this.sets.begin(this.writer, rules)))) return;
      for (const part of this.perHour.parts(this.membershipPartEvents))
        if (!(await queued(() => this.sets.writePart(this.writer, rules, part)))) return;
    }
    await queued(async () => {
      await this.sets.finish(this.writer, rules);
      return true;
    });
  }

  private async appendNow(batch: readonly NormalisedEvent[]): Promise<{ storedAt: number }> {
    const due = this.extras.due(batch);
    if (due.length > 0) await this.addFieldColumns(due);
    // The word index's blocks are time slices of the batch (tight ranges for its reads),
    // each slice's rows stored together, source by source.
    const events = [...batch].sort((a, b) => a.ts - b.ts);
    const rows = blockSlices(events.length).flatMap(([from, to]) => bySource(events.slice(from, to)));
    const storedAt = Date.now();
    const stored = tsValue(storedAt);
    // Word index (ADR 0004): the batch's blocks (plain data, a pure function) are written in
    // the transaction that appends its events: never events without a block, one WAL sync
    // (a commit of their own cost 3-4 ms per append, a third of a 1,000-event append).
    const blocks = buildWordBlocks(events, this.words.lowering);
    let inTransaction = false;
    try {
      await this.writer.run('BEGIN TRANSACTION');
      inTransaction = true;
      const words = await this.words.write(this.writer, blocks);
      for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
        const chunkRows = rows.slice(start, start + CHUNK_ROWS);
        const n = chunkRows.length;
        const cols: DuckDBValue[][] = this.types.map(() => new Array<DuckDBValue>(n));
        // After the schema's columns: stream membership, then the extra fields' own.
        const { schema, extras } = this.order;
        const own = new Map(
          extras.map((column, j) => [
            this.extras.fieldOf(column) as string,
            cols[schema.length + 1 + j] as DuckDBValue[],
          ]),
        );
        appendValues(schema, chunkRows, stored, cols, own);
        const bits = cols[schema.length] as DuckDBValue[];
        for (let i = 0; i < n; i++) bits[i] = this.sets.of(chunkRows[i] as NormalisedEvent, storedAt);
        const chunk = DuckDBDataChunk.create(this.types, n);
        chunk.setColumns(cols);
        this.appender.appendDataChunk(chunk);
      }
      this.appender.flushSync();
      // The commit makes the batch durable (in the WAL): only now is it acknowledged.
      await this.writer.run('COMMIT');
      inTransaction = false;
      this.words.add(words); // word index: the committed blocks in memory
      this.perHour.add(events);
    } catch (err) {
      try {
        this.appender.clear();
      } catch {
        // the appender's rows are dropped either way
      }
      if (inTransaction) await this.writer.run('ROLLBACK').catch(() => undefined);
      throw this.writeError(err);
    }
    this.full = null;
    return { storedAt };
  }

  /**
   * Gives `keys` columns of their own (field-columns.ts), and the appender the table's
   * new shape. A failure leaves them in the map: the append goes on either way.
   */
  private async addFieldColumns(keys: readonly string[]): Promise<void> {
    try {
      await this.extras.add(this.writer, keys);
    } catch {
      return; // e.g. no space for the catalog: the fields stay in the map
    }
    this.appender.closeSync();
    ({
      appender: this.appender,
      types: this.types,
      order: this.order,
    } = await openAppender(this.writer, this.extras));
  }

  /**
   * A write's failure as the API shows it: no space → 507 storage_full (and /api/health
   * answers 503 until there is room again), out of memory → 503; anything else unchanged.
   */
  private writeError(err: unknown): unknown {
    const mapped = isNoSpaceError(err) ? storageFull() : isOutOfMemoryError(err) ? outOfMemory() : null;
    if (!mapped) return err;
    if (mapped.code === 'storage_full') this.full = { freeBytes: this.freeBytes() ?? 0 };
    // The engine's text stays with it: whether DuckDB invalidated the database is read from it.
    (mapped as Error & { cause?: unknown }).cause = err;
    return mapped;
  }

  /**
   * Whether the data dir's file system has room for a checkpoint of the WAL as it is now.
   * DuckDB invalidates the whole database when a checkpoint cannot be written (every
   * statement fails, reads included, until it is opened again), so none is started
   * without room: the WAL keeps the events, durable, until there is.
   */
  private roomToCheckpoint(): boolean {
    const free = this.freeBytes();
    if (free === null) return true;
    let wal = 0;
    try {
      wal = statSync(`${this.file}.wal`).size;
    } catch {
      // no WAL
    }
    return free >= wal + CHECKPOINT_HEADROOM_BYTES;
  }

  /** Free bytes on the data dir's file system (null for an in-memory store or when unknown). */
  private freeBytes(): number | null {
    if (!this.file) return null;
    try {
      const s = statfsSync(path.dirname(this.file));
      return Number(s.bavail) * Number(s.bsize);
    } catch {
      return null;
    }
  }

  async getById(evId: string, scope: ReadScope): Promise<StoredEvent | null> {
    let receivedAt: number;
    try {
      receivedAt = decodeTime(evId);
    } catch {
      return null;
    }
    // The ULID's time is the receive time (or, after a clock step back, a little later):
    // a narrow range on received_at lets DuckDB's zone maps skip almost every row group.
    // On a connection of its own: the shared reader would queue it behind `stats`, which a
    // context asks for at the same time.
    const reader = await this.withConnection({}, (conn) =>
      this.gate.readAll(
        conn,
        `SELECT * FROM events WHERE received_at BETWEEN $1 AND $2 AND ev_id = $3 LIMIT 1`,
        [sqlTime(receivedAt - 3_600_000), sqlTime(receivedAt + 1000), evId],
      ),
    );
    const row = reader.getRowObjects()[0];
    const event = row ? this.event(row) : null;
    return event && inScope(scope, event) ? event : null;
  }

  private async withConnection<T>(opts: ExecOptions, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    if (opts.signal?.aborted) throw abortError();
    const conn = this.idle.pop() ?? (await this.instance.connect());
    const onAbort = () => conn.interrupt();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const poll = opts.onProgress
      ? setInterval(() => {
          const p = conn.progress.percentage;
          if (p >= 0) opts.onProgress?.(Math.min(1, p / 100));
        }, 100)
      : undefined;
    try {
      return await this.pending(conn, fn(conn));
    } catch (err) {
      if (opts.signal?.aborted) throw abortError();
      throw readError(err);
    } finally {
      clearInterval(poll);
      opts.signal?.removeEventListener('abort', onAbort);
      if (this.idle.length < 4) this.idle.push(conn);
      else conn.closeSync();
    }
  }

  /** `work` on `conn`, known to `close` until it settles. */
  private async pending<T>(conn: DuckDBConnection, work: Promise<T>): Promise<T> {
    this.busy.set(work, conn);
    try {
      return await work;
    } finally {
      this.busy.delete(work);
    }
  }

  private async rows(conn: DuckDBConnection, q: () => Compiled): Promise<Record<string, DuckDBValue>[]> {
    const reader = await this.gate.readAll(conn, q);
    return reader.getRowObjects();
  }

  /**
   * What a statement of `plan` reads, decided while it is being planned (statement-gate.ts),
   * so no write is half done: the plan within its scope, by the stored stream membership
   * when every event holds that of the scope's rules (`streams`, ADR 0016), by the scope's
   * filter otherwise; and the time ranges that may hold the words the filter requires
   * (`words`, the word index, ADR 0004; undefined when it requires none or the index is off).
   */
  private reach<P extends QueryPlan>(unscoped: P): Reach<P> {
    const streams = unscoped.scope.filter ? this.sets.read(unscoped.scope) : undefined;
    const plan = streams === undefined ? scopedPlan(unscoped) : unscoped;
    const words = this.useWords ? this.words.scan(plan.filter, plan.range) : undefined;
    const columnOf = this.extras.columnOf;
    return { plan, columnOf, ...(words ? { words } : {}), ...(streams === undefined ? {} : { streams }) };
  }

  /** Runs a plan (plan-executor.ts): each statement on its own connection, interrupted by the signal. */
  execute<P extends QueryPlan>(plan: P, opts: ExecOptions = {}): Promise<ResultOf<P>> {
    return executePlan(this.dialect, this.driver, plan, opts);
  }

  /** A row of `SELECT *` as its event, extra fields of their own columns among its fields. */
  private readonly event = (row: Record<string, DuckDBValue>): StoredEvent =>
    rowToEvent(row, this.extras.columns);

  private readonly dialect = duckDbDialect(
    (plan) => this.reach(plan),
    (plan) => this.fewMatches(plan),
    this.event,
  );

  /**
   * Whether the word index narrows a search to at most `FEW_MATCHES_EVENTS` events (by
   * the per-hour estimate of its candidate ranges): so few that its page is read first
   * and its count only when the page is full (plan-executor.ts).
   */
  private fewMatches(plan: SearchPlan): boolean {
    if (!this.useWords) return false;
    const ranges = this.words.scan(plan.filter, plan.range);
    if (!ranges) return false;
    let events = 0;
    for (const r of ranges) events += this.estimateInRange(r.fromMs, r.toMs + 1);
    return events <= FEW_MATCHES_EVENTS;
  }

  private readonly driver: Driver<() => Compiled> = (build, opts) =>
    this.withConnection(opts, async (conn) => {
      const built: { statement?: Compiled } = {};
      let rows = await this.rows(conn, () => {
        const statement = build();
        built.statement = statement;
        return statement;
      });
      let answer = built.statement;
      const next = answer?.followedBy?.(rows);
      if (next === null) return { rows: [] };
      if (next) {
        // The second statement of a page read by its keys (duckdb-plans.ts searchPageSql).
        rows = await this.rows(conn, () => next);
        answer = next;
      }
      return answer?.read ? answer.read(rows) : { rows };
    });

  /** The per-hour counts behind estimateInRange (hour start ms, events). */
  hourCounts(): Array<[number, number]> {
    return this.perHour.entries();
  }

  estimateInRange(fromMs: number, toMs: number): number {
    return this.perHour.estimate(fromMs, toMs);
  }

  appendedElsewhere(count: number, fromMs: number, toMs: number): void {
    this.perHour.addSpread(count, fromMs, toMs);
  }

  /** Rebuilds the per-hour histogram behind estimateInRange from the table. */
  private async loadHistogram(): Promise<void> {
    const rows = await this.runSql(
      `SELECT epoch_ms(ts) // ${HOUR_MS} AS h, count(*) AS n FROM events GROUP BY h`,
    );
    this.perHour.reset(rows.map((r) => [Number(r.h) * HOUR_MS, Number(r.n)] as const));
  }

  /**
   * Streams every event a search matches, in its order, a chunk at a time, so an export
   * of a million rows never holds them all in memory.
   */
  async *stream(plan: SearchPlan, opts: ExecOptions = {}): AsyncGenerator<StoredEvent> {
    const conn = await this.instance.connect();
    const onAbort = () => conn.interrupt();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let remaining = plan.limit;
      for (const range of this.streamWindows(plan)) {
        const window: SearchPlan = { ...plan, range, limit: remaining, offset: 0 };
        const result = await this.pending(
          conn,
          this.gate.start(
            conn,
            () => {
              const reach = this.reach(window);
              return searchRowsSql(reach.plan, reach);
            },
            [],
            true,
          ),
        );
        const names = result.columnNames();
        for (;;) {
          const chunk = await this.pending(conn, result.fetchChunk());
          if (!chunk || chunk.rowCount === 0) break;
          // A row at a time: converting the whole chunk (2,048 rows) at once held it all as
          // JavaScript values, a few hundred MB for rows of 999 fields.
          for (let r = 0; r < chunk.rowCount; r++) {
            const row = chunk.getRowValues(r);
            const obj: Record<string, DuckDBValue> = {};
            names.forEach((n, i) => {
              obj[n] = row[i] as DuckDBValue;
            });
            remaining--;
            yield this.event(obj);
          }
        }
        if (remaining <= 0) break;
      }
    } catch (err) {
      if (opts.signal?.aborted) throw abortError();
      throw readError(err);
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      conn.closeSync();
    }
  }

  /**
   * A search sorted by time alone streams in time windows of about `streamWindowEvents`
   * events, in the sort's direction, so DuckDB sorts one window at a time instead of
   * holding every matching row (measured: a 1M-row export otherwise grew the server by
   * ~770 MB). Other sorts stream as one statement.
   */
  private streamWindows(plan: SearchPlan): TimeWindow[] {
    const only = plan.sort.length === 1 ? plan.sort[0] : undefined;
    const { fromMs, toMs } = plan.range;
    const estimate = this.estimateInRange(fromMs, toMs);
    if (only?.field !== 'ts' || estimate <= this.streamWindowEvents) return [plan.range];
    const step = Math.max(1000, Math.ceil(((toMs - fromMs) * this.streamWindowEvents) / estimate));
    const windows: TimeWindow[] = [];
    for (let lo = fromMs; lo < toMs; lo += step)
      windows.push({ fromMs: lo, toMs: Math.min(toMs, lo + step) });
    return only.desc ? windows.reverse() : windows;
  }

  async deleteOlderThan(tsMs: number, keep?: FilterNode): Promise<number> {
    const res = await this.gate.write(async () => {
      if (keep) {
        // Some older events stay: their word blocks stay too (a block only prunes, so the
        // blocks of deleted events are false candidates at worst, as after a crash).
        const params = new SqlParams(undefined, this.extras.columnOf);
        const cut = params.add(sqlTime(tsMs));
        const kept = compileFilter(keep, params);
        return this.writer.run(
          `DELETE FROM events WHERE ts < ${cut} AND NOT (${kept})`,
          params.values.map(duckDbValue),
        );
      }
      const deleted = await this.writer.run('DELETE FROM events WHERE ts < $1', [tsValue(tsMs)]);
      // Word index: blocks whose events are all gone, after them (a crash leaves false candidates).
      await this.words.deleteOlderThan(this.writer, tsMs);
      return deleted;
    });
    // A checkpoint gives the deleted rows' blocks back (dataBytes drops: retentionMaxBytes
    // sees it); one that cannot run now (another transaction) comes with the next.
    if (res.rowsChanged > 0) await this.checkpoint().catch(() => undefined);
    await this.loadHistogram();
    return res.rowsChanged;
  }

  async stats(): Promise<EventStoreStats> {
    const r = await this.pending(
      this.reader,
      this.gate.readAll(this.reader, 'SELECT count(*) AS n, min(ts) AS lo, max(ts) AS hi FROM events'),
    );
    const row = r.getRowObjects()[0] ?? {};
    let bytesOnDisk = 0;
    if (this.file) {
      for (const f of [this.file, `${this.file}.wal`]) {
        try {
          bytesOnDisk += statSync(f).size;
        } catch {
          // no WAL right after a checkpoint
        }
      }
    }
    // Used blocks, not the file: a delete leaves free blocks DuckDB reuses before growing.
    let dataBytes = bytesOnDisk;
    if (this.file) {
      const size = await this.pending(
        this.reader,
        this.gate.readAll(
          this.reader,
          'SELECT used_blocks * block_size AS used, wal_size FROM pragma_database_size() WHERE database_name = current_database()',
        ),
      );
      const s = size.getRowObjectsJS()[0] as { used?: bigint | number } | undefined;
      let wal = 0;
      try {
        wal = statSync(`${this.file}.wal`).size;
      } catch {
        // no WAL right after a checkpoint
      }
      if (s?.used !== undefined) dataBytes = Number(s.used) + wal;
    }
    return {
      events: Number(row.n ?? 0),
      bytesOnDisk,
      dataBytes,
      oldestTs: row.lo ? fromTs(row.lo) : null,
      newestTs: row.hi ? fromTs(row.hi) : null,
    };
  }

  /**
   * Runs SQL on the read connection and returns plain row objects. For benchmarks (the
   * raw-engine side) and tests; the API never passes user text here.
   */
  async runSql(sql: string, params: readonly Bound[] = []): Promise<Record<string, unknown>[]> {
    const reader = await this.pending(this.reader, this.gate.readAll(this.reader, sql, params));
    return reader.getRowObjectsJS() as Record<string, unknown>[];
  }

  /**
   * Writes the WAL into the main file (measurements of size; shutdown; idle). Refused with
   * storage_full when the disk has no room for it (`roomToCheckpoint`).
   */
  async checkpoint(): Promise<void> {
    await this.gate.write(async () => {
      if (!this.roomToCheckpoint())
        throw storageFull('The event store has no room on its disk to checkpoint its write-ahead log.');
      await this.writer.run('CHECKPOINT');
    });
  }

  /** Nothing runs elsewhere: the store is this process's, and so are its statements. */
  async abandon(_tagPrefix: string): Promise<void> {}

  /** Fails while the store cannot answer, or cannot write for lack of space. */
  async ping(): Promise<void> {
    await this.pending(this.reader, this.reader.run('SELECT 1'));
    const free = this.freeBytes();
    if (free === null) return;
    // Room again since the failed write (someone freed space): writes are expected to work.
    if (this.full && free >= this.full.freeBytes + MIN_FREE_BYTES) this.full = null;
    if (this.full || free < MIN_FREE_BYTES)
      throw unavailable(`The event store's disk is full (${Math.round(free / 1024)} KiB free).`);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const conn of new Set(this.busy.values())) conn.interrupt();
    await Promise.allSettled(this.busy.keys());
    await this.appendQueue;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    await this.idleCheckpoint;
    for (const c of this.idle.splice(0)) c.closeSync();
    this.appender.closeSync();
    this.words.close(); // word index: its appender
    this.reader.closeSync();
    this.writer.closeSync();
    this.instance.closeSync();
  }
}

/**
 * The table's appender, with its column types and order. Every column after stream
 * membership must be an extra field's (field-columns.ts): a table that says otherwise is
 * refused rather than appended into.
 */
async function openAppender(
  writer: DuckDBConnection,
  extras: FieldColumns,
): Promise<{ appender: DuckDBAppender; types: DuckDBType[]; order: TableOrder }> {
  const order = await tableOrder(writer);
  const unknown = order.extras.filter((column) => extras.fieldOf(column) === undefined);
  if (unknown.length > 0)
    throw new Error(`the events table has columns of no known field: ${unknown.join(', ')}`);
  const appender = await writer.createAppender('events');
  const types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
  return { appender, types, order };
}

/**
 * A query's engine failure as clients may see it: out of memory, or no room to spill to
 * disk, become AppErrors with a clear message; the engine's text stays in the log (the
 * original error is kept as `cause`).
 */
function readError(err: unknown): unknown {
  const mapped = isOutOfMemoryError(err)
    ? outOfMemory()
    : isNoSpaceError(err)
      ? storageFull('The server has no disk space left to compute this query; retry once space is freed.')
      : null;
  if (!mapped) return err;
  (mapped as Error & { cause?: unknown }).cause = err;
  return mapped;
}

/**
 * A word-index block's rows as they are stored: each source's (host and app) events
 * together, in time order, sources in the order they first occur. A source's neighbouring
 * events (a context, a `host:` search) then sit in a few vectors instead of one per event.
 * It costs `ts` some compression (out of time order across sources) and saves a little on
 * `host` and `ev_id` (bench/notes/2026-11-25-event-context.md). Ordered within a block, not across a whole batch,
 * so a block's time range is also a run of rows: the word index's ranges read that run's
 * vectors, not every vector of a large append (a rare word's range at 1 M events: ~8,000
 * rows, not the 50,000 of the bench's appends). Nothing reads the physical order: every
 * order a query gives ends in `ev_id`.
 */
function bySource(events: readonly NormalisedEvent[]): NormalisedEvent[] {
  const groups = new Map<string, NormalisedEvent[]>();
  for (const e of events) {
    const key = `${e.host ?? ''}\u0000${e.app ?? ''}`;
    const group = groups.get(key);
    if (group) group.push(e);
    else groups.set(key, [e]);
  }
  if (groups.size === 1) return events as NormalisedEvent[];
  const out: NormalisedEvent[] = [];
  for (const group of groups.values()) for (const e of group) out.push(e);
  return out;
}
