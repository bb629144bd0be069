import type { DuckDBConnection, DuckDBDataChunk, DuckDBResultReader, DuckDBValue } from '@duckdb/node-api';
import type { StoredEvent } from '../../core/event.js';
import { isNoSpaceError, isOutOfMemoryError, outOfMemory, storageFull } from '../../errors/errors.js';
import type { FilterNode } from '../../filter/ast.js';
import type { IndexReach, ReadReach } from '../event-store.js';
import type { ExecOptions, QueryPlan, SearchPlan, TimeWindow } from '../query-plan.js';
import { scopedPlan } from '../read-scope.js';
import type { ResultRow, StatementRows } from '../result-shaper.js';
import type { SqlParams } from '../sql/sql-params.js';
import type { StoreDriver, StreamCursor } from '../store-dialect.js';
import { type ColdFile, type ColdFiles, coldFileError, coldRowsSql } from './cold-files.js';
import { groupRanges, type RowRange, summaryAdmits } from './cold-summary.js';
import type { DuckDbDatabase } from './duckdb-database.js';
import { type Compiled, type Narrowing, type Reach, searchRowsSql } from './duckdb-plans.js';
import { rowToEvent } from './duckdb-schema.js';
import type { DuckDbStatement } from './duckdb-statements.js';
import type { Bound } from './statement-gate.js';
import { testsWords } from './word-queries.js';

/**
 * A search the word index narrows to at most this many events reads its page first and
 * counts only when the page is full (`fewMatches`): at 10 M events a rare word's page and
 * count side by side took 38 ms, its page alone 25. A page that comes back full costs the
 * count after it, over these few events.
 */
const FEW_MATCHES_EVENTS = 100_000;

/**
 * The same for the cold rows a search reads, when every cold file it opens is narrowed
 * to the row groups its summary admits (each then likely holds a match: a bloom of the
 * words of GROUP_ROWS rows): a rare word of 30 day files reads 30 groups (491,520 rows).
 * Its page alone then took about as long as its page and count side by side (both
 * statements use every core), and a page that comes back short needs no count.
 */
const FEW_MATCHES_COLD_ROWS = 1_000_000;

/** Idle query connections kept for the next statements. */
const IDLE_CONNECTIONS = 4;

/**
 * The DuckDB store's reads: the driver of its dialect (duckdb-dialect.ts). Each statement
 * runs on a connection of its own, so it can be interrupted alone and never queues behind
 * another (the shared reader would put an event's read behind `stats`, which a context
 * asks for at the same time); statements are planned through the statement gate, and each
 * decides its reach (scope, word index ranges) as it is planned.
 */
export class DuckDbReads implements StoreDriver<DuckDbStatement> {
  /** Idle query connections; each running statement has its own so it can be interrupted. */
  private readonly idle: DuckDBConnection[] = [];
  /**
   * Calls into DuckDB under way on read connections, each with its connection: `close`
   * interrupts them and waits, so no query completes into a thread that is gone.
   */
  private readonly busy = new Map<Promise<unknown>, DuckDBConnection>();

  constructor(
    private readonly db: DuckDbDatabase,
    /** Events per window when streaming a time-sorted search. */
    private readonly streamWindowEvents: number,
    /** About how many events lie in a range (the store runtime's per-hour estimate). */
    readonly estimate: (fromMs: number, toMs: number) => number,
  ) {}

  /** An engine failure as clients may see it: a cold file named, out of memory, no room. */
  readonly error = (err: unknown): unknown =>
    (this.db.cold && coldFileError(err, this.db.cold)) || readError(err);

  /** Runs a statement on a connection of its own, interrupted by the signal. */
  run(build: DuckDbStatement, opts: ExecOptions): Promise<StatementRows> {
    return this.withConnection(opts, async (conn) => {
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
  }

  /**
   * A search's rows on a connection of its own, a chunk at a time: a search sorted by time
   * alone in windows (`streamWindows`), other sorts as one statement.
   */
  stream(plan: SearchPlan): StreamCursor {
    const held: { conn?: DuckDBConnection } = {};
    return {
      batches: this.streamChunks(plan, held),
      interrupt: () => held.conn?.interrupt(),
      close: () => held.conn?.closeSync(),
    };
  }

  private async *streamChunks(
    plan: SearchPlan,
    held: { conn?: DuckDBConnection },
  ): AsyncGenerator<Iterable<ResultRow>> {
    const conn = await this.db.instance.connect();
    held.conn = conn;
    let remaining = plan.limit;
    const taken = () => {
      remaining--;
    };
    for (const range of this.streamWindows(plan)) {
      const window: SearchPlan = { ...plan, range, limit: remaining, offset: 0 };
      const result = await this.pending(
        conn,
        this.db.gate.start(
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
        yield chunkRows(chunk, names, taken);
      }
      if (remaining <= 0) break;
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
    const estimate = this.estimate(fromMs, toMs);
    if (only?.field !== 'ts' || estimate <= this.streamWindowEvents) return [plan.range];
    const step = Math.max(1000, Math.ceil(((toMs - fromMs) * this.streamWindowEvents) / estimate));
    const windows: TimeWindow[] = [];
    for (let lo = fromMs; lo < toMs; lo += step)
      windows.push({ fromMs: lo, toMs: Math.min(toMs, lo + step) });
    return only.desc ? windows.reverse() : windows;
  }

  /** A row of `SELECT *` as its event, extra fields of their own columns among its fields. */
  readonly event = (row: Record<string, DuckDBValue>): StoredEvent => rowToEvent(row, this.db.extras.columns);

  /**
   * What a statement of `plan` reads, decided while it is being planned (statement-gate.ts),
   * so no write is half done: the plan within its scope, by the stored stream membership
   * when every event holds that of the scope's rules (`streams`, ADR 0016), by the scope's
   * filter otherwise; and the time ranges that may hold the words the filter requires
   * (`words`, the word index, ADR 0004; undefined when it requires none or the index is off).
   */
  readonly reach = <P extends QueryPlan>(unscoped: P): Reach<P> => {
    const { sets, words: index, useWords, extras } = this.db;
    const streams = unscoped.scope.filter ? sets.read(unscoped.scope) : undefined;
    const plan = streams === undefined ? scopedPlan(unscoped) : unscoped;
    const words = useWords ? index.scan(plan.filter, plan.range) : undefined;
    // Only a Search's page is read by it (duckdb-plans.ts `searchPageSql`).
    const wordTest = plan.kind === 'search' && testsWords(plan.filter);
    const { columnOf, columns: extraColumns } = extras;
    // The files the range meets whose summaries admit what the filter requires.
    const read = this.db.cold ? this.admitted(this.db.cold, plan.filter, plan.range) : null;
    const cold =
      read &&
      this.coldRows(
        () => read.files,
        (f) => read.rows.get(f.id) ?? null,
      );
    const coldNarrowed = !!read && read.files.every((f) => read.rows.has(f.id));
    return {
      plan,
      columnOf,
      extraColumns,
      ...(words ? { words } : {}),
      ...(wordTest ? { wordTest } : {}),
      ...(streams === undefined ? {} : { streams }),
      ...(cold ? { cold, coldNarrowed } : {}),
    };
  };

  /**
   * The cold files a read of `filter` over `range` opens: those its range meets that their
   * summaries admit, with the rows of each its groups narrow it to (none: the whole file).
   */
  private admitted(
    cold: ColdFiles,
    filter: FilterNode,
    range: TimeWindow,
  ): { files: ColdFile[]; rows: Map<number, readonly RowRange[]> } {
    const test = this.db.words.test(filter);
    const rows = new Map<number, readonly RowRange[]>();
    const files = cold.meeting(range).filter((f) => {
      const summary = cold.summary(f);
      if (!summaryAdmits(summary, test, filter)) return false;
      const ranges = groupRanges(summary, test);
      if (ranges) rows.set(f.id, ranges);
      return ranges === null || ranges.length > 0;
    });
    return { files, rows };
  }

  /** What a read of `filter` (its scope in it) over `range` meets of the word index and the cold tier. */
  readReach(filter: FilterNode, range: TimeWindow, withIndex: boolean): ReadReach {
    const index: IndexReach | null = !withIndex
      ? null
      : this.db.useWords
        ? this.db.words.reach(filter, range)
        : { path: 'scan', why: 'index_off', blocks: 0, candidate_blocks: 0, ranges: 0 };
    const { cold } = this.db;
    const meeting = cold?.meeting(range) ?? [];
    if (!cold || meeting.length === 0) return { index, cold: null };
    const read = this.admitted(cold, filter, range).files;
    return {
      index,
      cold: {
        files: meeting.length,
        files_skipped: meeting.length - read.length,
        files_read: read.length,
        bytes_read: read.reduce((n, f) => n + f.bytes, 0),
      },
    };
  }

  /**
   * The rows of the cold files `which` picks, in the hot table's shape (cold-files.ts):
   * picked when the statement is built, so they are those of the snapshot it reads.
   */
  readonly coldRows = (
    which: (cold: ColdFiles) => readonly ColdFile[],
    rowsOf?: (f: ColdFile) => readonly RowRange[] | null,
  ): Narrowing['cold'] => {
    const { cold, sets, extras } = this.db;
    const files = cold ? which(cold) : [];
    if (!cold || files.length === 0) return undefined;
    const extraColumns = extras.columns;
    return (params: SqlParams, range?: TimeWindow) =>
      coldRowsSql(cold, files, extraColumns, (p) => sets.bitsOfRows(p), params, rowsOf, range);
  };

  /**
   * Whether the word index narrows a search to at most `FEW_MATCHES_EVENTS` events (by
   * the per-hour estimate of its candidate ranges): so few that its page is read first
   * and its count only when the page is full (plan-executor.ts).
   */
  readonly fewMatches = (plan: SearchPlan): boolean => {
    if (!this.db.useWords) return false;
    const ranges = this.db.words.scan(plan.filter, plan.range);
    if (!ranges) return false;
    let events = 0;
    for (const r of ranges) events += this.estimate(r.fromMs, r.toMs + 1);
    if (events > FEW_MATCHES_EVENTS) return false;
    const { cold } = this.db;
    if (!cold?.meeting(plan.range).length) return true;
    // The cold rows it reads: only the row groups whose summaries admit the words.
    const read = this.admitted(cold, plan.filter, plan.range);
    let rows = 0;
    for (const f of read.files) {
      const narrowed = read.rows.get(f.id);
      if (!narrowed) return false;
      for (const [from, to] of narrowed) rows += to - from;
    }
    return rows <= FEW_MATCHES_COLD_ROWS;
  };

  /** SQL on the shared read connection, every row read (stats, and raw SQL for tests). */
  onReader(sql: string, params: readonly Bound[] = []): Promise<DuckDBResultReader> {
    return this.pending(this.db.reader, this.db.gate.readAll(this.db.reader, sql, params));
  }

  /** `work` on `conn`, known to `close` until it settles. */
  async pending<T>(conn: DuckDBConnection, work: Promise<T>): Promise<T> {
    this.busy.set(work, conn);
    try {
      return await work;
    } finally {
      this.busy.delete(work);
    }
  }

  /** Interrupts the calls under way and waits until they have all settled (the store's close). */
  async settle(): Promise<void> {
    for (const conn of new Set(this.busy.values())) conn.interrupt();
    await Promise.allSettled(this.busy.keys());
  }

  /** Closes the idle connections (the store's close, once nothing runs). */
  closeIdle(): void {
    for (const c of this.idle.splice(0)) c.closeSync();
  }

  private async withConnection<T>(opts: ExecOptions, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    const conn = this.idle.pop() ?? (await this.db.instance.connect());
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
    } finally {
      clearInterval(poll);
      opts.signal?.removeEventListener('abort', onAbort);
      if (this.idle.length < IDLE_CONNECTIONS) this.idle.push(conn);
      else conn.closeSync();
    }
  }

  private async rows(conn: DuckDBConnection, q: () => Compiled): Promise<Record<string, DuckDBValue>[]> {
    const reader = await this.db.gate.readAll(conn, q);
    return reader.getRowObjects();
  }
}

/**
 * A chunk's rows as objects, one at a time as they are consumed: converting the whole
 * chunk (2,048 rows) at once held it all as JavaScript values, a few hundred MB for rows
 * of 999 fields. `taken` counts each row handed out.
 */
function* chunkRows(
  chunk: DuckDBDataChunk,
  names: readonly string[],
  taken: () => void,
): Generator<ResultRow> {
  for (let r = 0; r < chunk.rowCount; r++) {
    const row = chunk.getRowValues(r);
    const obj: Record<string, DuckDBValue> = {};
    names.forEach((n, i) => {
      obj[n] = row[i] as DuckDBValue;
    });
    taken();
    yield obj;
  }
}

/**
 * A query's engine failure as clients may see it: out of memory, or no room to spill to
 * disk, become AppErrors with a clear message; the engine's text stays in the log (the
 * original error is kept as `cause`).
 */
export function readError(err: unknown): unknown {
  const mapped = isOutOfMemoryError(err)
    ? outOfMemory()
    : isNoSpaceError(err)
      ? storageFull('The server has no disk space left to compute this query; retry once space is freed.')
      : null;
  if (!mapped) return err;
  (mapped as Error & { cause?: unknown }).cause = err;
  return mapped;
}
