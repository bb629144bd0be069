import { statfsSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  isNoSpaceError,
  isOutOfMemoryError,
  outOfMemory,
  storageFull,
  unavailable,
} from '../../errors/errors.js';
import type { FilterNode } from '../../filter/ast.js';
import type { EventStoreStats } from '../event-store.js';
import type { TimeWindow } from '../query-plan.js';
import { SqlParams, sqlTime } from '../sql/sql-params.js';
import type { StoreRuntime } from '../store-runtime.js';
import { listValue } from './duckdb-api.js';
import { DuckDbBackups } from './duckdb-backup.js';
import type { DuckDbDatabase } from './duckdb-database.js';
import { compileFilter } from './duckdb-filter-compiler.js';
import type { DuckDbReads } from './duckdb-reads.js';
import { duckDbValue, fromTs, tsValue } from './duckdb-schema.js';
import type { DuckDbStatement } from './duckdb-statements.js';

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
 * The DuckDB store's upkeep: its disk (whether a write failed for lack of space, room for
 * a checkpoint), checkpoints (asked for, and once appends pause), retention's deletes,
 * the figures of `stats` and the health check.
 */
export class DuckDbMaintenance {
  /**
   * Set when a write failed for lack of space (with the free bytes then), cleared by the
   * next write that succeeds or once the file system has room again: /api/health says so.
   */
  private full: { freeBytes: number } | null = null;
  /** Set after each append: the checkpoint once appends pause (`checkpointWhenIdle`). */
  private idleTimer: NodeJS.Timeout | null = null;
  /** The idle checkpoint while it runs (close waits for it). */
  private idleCheckpoint: Promise<void> | null = null;

  constructor(
    private readonly db: DuckDbDatabase,
    private readonly reads: DuckDbReads,
    private readonly runtime: StoreRuntime<DuckDbStatement>,
  ) {}

  /**
   * Once appends pause for `IDLE_CHECKPOINT_MS`, a WAL of `IDLE_CHECKPOINT_WAL_BYTES` or
   * more is written into the main file: at rest the events sit compressed (the WAL holds
   * them row by row, 3-4 times the bytes) and a restart has little to replay. Under steady
   * ingest only `checkpoint_threshold` checkpoints, as before.
   */
  checkpointWhenIdle(): void {
    if (this.db.file === null) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      let wal = 0;
      try {
        wal = statSync(`${this.db.file}.wal`).size;
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
   * Writes the WAL into the main file (measurements of size; shutdown; idle). Refused with
   * storage_full when the disk has no room for it (`roomToCheckpoint`).
   */
  async checkpoint(): Promise<void> {
    await this.db.gate.write(async () => {
      if (!this.roomToCheckpoint())
        throw storageFull('The event store has no room on its disk to checkpoint its write-ahead log.');
      await this.db.writer.run('CHECKPOINT');
    });
  }

  /** A write succeeded: the disk is not full (any more). */
  wrote(): void {
    this.full = null;
  }

  /**
   * A write's failure as the API shows it: no space → 507 storage_full (and /api/health
   * answers 503 until there is room again), out of memory → 503; anything else unchanged.
   */
  writeError(err: unknown): unknown {
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
      wal = statSync(`${this.db.file}.wal`).size;
    } catch {
      // no WAL
    }
    return free >= wal + CHECKPOINT_HEADROOM_BYTES;
  }

  /** Free bytes on the data dir's file system (null for an in-memory store or when unknown). */
  private freeBytes(): number | null {
    if (!this.db.file) return null;
    try {
      const s = statfsSync(path.dirname(this.db.file));
      return Number(s.bavail) * Number(s.bsize);
    } catch {
      return null;
    }
  }

  async deleteOlderThan(tsMs: number, keep?: FilterNode): Promise<number> {
    const { gate, writer, words, extras } = this.db;
    const res = await gate.write(async () => {
      if (keep) {
        // Some older events stay: their word blocks stay too (a block only prunes, so the
        // blocks of deleted events are false candidates at worst, as after a crash).
        const params = new SqlParams(undefined, extras.columnOf);
        const cut = params.add(sqlTime(tsMs));
        const kept = compileFilter(keep, params);
        return writer.run(
          `DELETE FROM events WHERE ts < ${cut} AND NOT (${kept})`,
          params.values.map(duckDbValue),
        );
      }
      const deleted = await writer.run('DELETE FROM events WHERE ts < $1', [tsValue(tsMs)]);
      // Word index: blocks whose events are all gone, after them (a crash leaves false candidates).
      await words.deleteOlderThan(writer, tsMs);
      return deleted;
    });
    // A checkpoint gives the deleted rows' blocks back (dataBytes drops: retentionMaxBytes
    // sees it); one that cannot run now (another transaction) comes with the next.
    if (res.rowsChanged > 0) await this.checkpoint().catch(() => undefined);
    await this.runtime.loadHistogram();
    return res.rowsChanged;
  }

  /**
   * New `pattern_id`s of events (re-mining): one UPDATE joined to the pairs, within the
   * range so the zone maps of `ts` skip the rest; the events' stream membership is written
   * again when a stream's rule reads `pattern_id` (stream-sets.ts).
   */
  async setPatternIds(range: TimeWindow, ids: ReadonlyArray<readonly [string, string]>): Promise<void> {
    if (!ids.length) return;
    const { gate, writer, sets } = this.db;
    const evIds = listValue(ids.map(([e]) => e));
    await gate.write(async () => {
      await writer.run(
        `UPDATE events SET pattern_id = m.p
         FROM (SELECT unnest($1::VARCHAR[]) AS id, unnest($2::VARCHAR[]) AS p) AS m
         WHERE events.ts >= $3 AND events.ts < $4 AND events.ev_id = m.id`,
        [evIds, listValue(ids.map(([, p]) => p)), tsValue(range.fromMs), tsValue(range.toMs)],
      );
      await sets.rewrite(writer, 'pattern_id', range, evIds);
      // Changed in place: the next incremental backup holds them again.
      await DuckDbBackups.changed(writer, range.fromMs, range.toMs);
    });
  }

  async stats(): Promise<EventStoreStats> {
    const r = await this.reads.onReader('SELECT count(*) AS n, min(ts) AS lo, max(ts) AS hi FROM events');
    const row = r.getRowObjects()[0] ?? {};
    // The span is both tiers' (ADR 0031): what a read of all time is given (an event's
    // context) meets the cold files too. The records are read after the hot rows, so a
    // move committed in between is in one or both, never in neither.
    let oldestTs = row.lo ? fromTs(row.lo) : null;
    let newestTs = row.hi ? fromTs(row.hi) : null;
    for (const f of this.db.cold?.all() ?? []) {
      oldestTs = oldestTs === null ? f.minTs : Math.min(oldestTs, f.minTs);
      newestTs = newestTs === null ? f.maxTs : Math.max(newestTs, f.maxTs);
    }
    const { file } = this.db;
    let bytesOnDisk = 0;
    if (file) {
      for (const f of [file, `${file}.wal`]) {
        try {
          bytesOnDisk += statSync(f).size;
        } catch {
          // no WAL right after a checkpoint
        }
      }
    }
    // Used blocks, not the file: a delete leaves free blocks DuckDB reuses before growing.
    let dataBytes = bytesOnDisk;
    if (file) {
      const size = await this.reads.onReader(
        'SELECT used_blocks * block_size AS used, wal_size FROM pragma_database_size() WHERE database_name = current_database()',
      );
      const s = size.getRowObjectsJS()[0] as { used?: bigint | number } | undefined;
      let wal = 0;
      try {
        wal = statSync(`${file}.wal`).size;
      } catch {
        // no WAL right after a checkpoint
      }
      if (s?.used !== undefined) dataBytes = Number(s.used) + wal;
    }
    return {
      events: Number(row.n ?? 0),
      bytesOnDisk,
      dataBytes,
      oldestTs,
      newestTs,
    };
  }

  /** Fails while the store cannot answer, or cannot write for lack of space. */
  async ping(): Promise<void> {
    const { reader } = this.db;
    await this.reads.pending(reader, reader.run('SELECT 1'));
    const free = this.freeBytes();
    if (free === null) return;
    // Room again since the failed write (someone freed space): writes are expected to work.
    if (this.full && free >= this.full.freeBytes + MIN_FREE_BYTES) this.full = null;
    if (this.full || free < MIN_FREE_BYTES)
      throw unavailable(`The event store's disk is full (${Math.round(free / 1024)} KiB free).`);
  }

  /** No checkpoint starts once appends pause, and the one under way has ended (the store's close). */
  async stop(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    await this.idleCheckpoint;
  }
}
