import { linkSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError } from '../../errors/errors.js';
import type {
  BackupOpen,
  BackupPlan,
  BackupSnapshot,
  BackupStep,
  BackupStepResult,
} from '../backup-store.js';
import { SqlParams } from '../sql/sql-params.js';
import type { DuckDbDatabase } from './duckdb-database.js';
import { compileFilter } from './duckdb-filter-compiler.js';

/** Where a backup's links to the cold files it holds live, inside the cold directory. */
export const HOLD_FOLDER = '.backup-hold';

/** One backup's open snapshot: its connection, pinned in a transaction, and its hold on the cold files. */
interface OpenBackup {
  conn: DuckDBConnection;
  holdDir: string | null;
  release: () => void;
  /** The write turn was let go by its time limit, before `release`: no instant. */
  expired: boolean;
}

/** A SQL string literal (COPY takes no bound file name). */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
/** A table name as an identifier. */
const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Events stored, or changed in place (a re-mine's new pattern ids), at or after `since`
 * (ms): what an incremental backup holds of the hot events.
 */
const changedSince = (since: number) =>
  `(epoch_ms(stored_at) >= ${Math.floor(since)} OR EXISTS (SELECT 1 FROM backup_changes c
    WHERE c.changed_at >= ${Math.floor(since)} AND events.ts >= c.ts_from AND events.ts < c.ts_to))`;

/**
 * Backups of the DuckDB store (ADR 0036): a snapshot taken in the store's write turn, then
 * written file by file from that snapshot beside the store's own work.
 */
export class DuckDbBackups {
  private readonly open = new Map<string, OpenBackup>();

  /** The ranges whose events were changed in place, and when (read by incremental backups). */
  static readonly TABLE =
    'CREATE TABLE IF NOT EXISTS backup_changes (ts_from TIMESTAMP NOT NULL, ts_to TIMESTAMP NOT NULL, changed_at BIGINT NOT NULL)';

  /** Records that the events of `[fromMs, toMs)` changed in place now (inside the write that changes them). */
  static changed(writer: DuckDBConnection, fromMs: number, toMs: number): Promise<unknown> {
    return writer.run(
      'INSERT INTO backup_changes VALUES (epoch_ms($1::BIGINT), epoch_ms($2::BIGINT), $3::BIGINT)',
      [Math.floor(fromMs), Math.floor(toMs), Date.now()],
    );
  }

  constructor(private readonly db: DuckDbDatabase) {
    // A server that stopped during a backup left its links: nothing reads them.
    if (db.cold) rmSync(path.join(db.cold.dir, HOLD_FOLDER), { recursive: true, force: true });
  }

  /**
   * Inside the store's write turn (no append, delete or cold write commits meanwhile):
   * begins the backup's transaction and pins its snapshot, and links each cold file it
   * records into the hold folder. Resolves `pinned` with the snapshot, then holds the turn
   * until `release(id)` (or `holdMs`, whichever first): the caller pins the metadata store
   * meanwhile, so both are of one instant.
   */
  async pin(req: BackupOpen, pinned: (snapshot: BackupSnapshot) => void): Promise<void> {
    if (this.open.size) throw new AppError(409, 'backup_running', 'A backup of this store is open already.');
    const conn = await this.db.instance.connect();
    let holdDir: string | null = null;
    try {
      await conn.run('BEGIN TRANSACTION');
      const snapshotAt = Date.now();
      // The first read of the database fixes the transaction's snapshot for every table.
      await conn.run('SELECT count(*) FROM events');
      const cold = this.db.cold
        ? (
            await conn.runAndReadAll(
              'SELECT id, stream_id, path, rows, bytes, sha256 FROM cold_files ORDER BY id',
            )
          ).getRowObjectsJS()
        : [];
      const files = cold.map((r) => ({
        id: Number(r.id),
        streamId: Number(r.stream_id),
        path: String(r.path),
        rows: Number(r.rows),
        bytes: Number(r.bytes),
        sha256: String(r.sha256),
        held: '',
      }));
      if (this.db.cold && files.length) {
        holdDir = path.join(this.db.cold.dir, HOLD_FOLDER, req.id);
        mkdirSync(holdDir, { recursive: true, mode: 0o700 });
        for (const f of files) {
          f.held = path.join(holdDir, String(f.id));
          linkSync(this.db.cold.absolute(f), f.held);
        }
      }
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const backup: OpenBackup = { conn, holdDir, release, expired: false };
      this.open.set(req.id, backup);
      pinned({ snapshotAt, coldDir: this.db.cold?.dir ?? null, coldFiles: files });
      const timer = setTimeout(() => {
        backup.expired = true;
        release();
      }, req.holdMs);
      await released;
      clearTimeout(timer);
    } catch (err) {
      this.open.delete(req.id);
      await this.end(conn, holdDir);
      throw err;
    }
  }

  /** Stops the statement a backup's step runs (a cancel, the server stopping): the step fails. */
  interrupt(id: string): void {
    this.open.get(id)?.conn.interrupt();
  }

  /**
   * Lets the store's writers go on (the snapshot stays pinned). False when the turn had
   * been let go already by its time limit: the caller's other snapshot is not of the instant.
   */
  release(id: string): boolean {
    const backup = this.open.get(id);
    if (!backup) return false;
    backup.release();
    return !backup.expired;
  }

  /**
   * A copy (sorting and compressing every row) on half of DuckDB's threads, the others left
   * to ingest and queries: on a small machine the copy on all of them took the cores from
   * the appends, and ingest's p99 past the contract's bound (bench/notes/2026-11-30-backup.md).
   * The setting is the instance's: queries running meanwhile get the same share.
   */
  private async onFewerThreads<T>(work: () => Promise<T>): Promise<T> {
    // On a connection of its own: the backup's is in a transaction a failed copy aborts.
    const settings = await this.db.instance.connect();
    try {
      const [row] = (
        await settings.runAndReadAll("SELECT current_setting('threads') AS n")
      ).getRowObjectsJS();
      const all = Number(row?.n ?? 1);
      const share = Math.max(1, Math.floor(all / 2));
      if (share === all) return await work();
      await settings.run(`SET threads = ${share}`);
      try {
        return await work();
      } finally {
        await settings.run(`SET threads = ${all}`);
      }
    } finally {
      settings.closeSync();
    }
  }

  /** One step of writing the backup from its snapshot. */
  async step(id: string, step: BackupStep): Promise<BackupStepResult> {
    const backup = this.open.get(id);
    if (!backup) throw new AppError(404, 'not_found', `No backup ${id} is open in the event store.`);
    return step.kind === 'plan' || step.kind === 'counts'
      ? this.stepNow(backup.conn, step)
      : this.onFewerThreads(() => this.stepNow(backup.conn, step));
  }

  private async stepNow(conn: DuckDBConnection, step: BackupStep): Promise<BackupStepResult> {
    const read = async (sql: string) =>
      (await this.db.gate.readAll(conn, sql)).getRowObjectsJS() as Record<string, unknown>[];
    switch (step.kind) {
      case 'plan':
        return { kind: 'plan', plan: await this.plan(read, step.since) };
      case 'ids':
        await this.db.gate.start(
          conn,
          `COPY (SELECT ev_id FROM events ORDER BY ev_id) TO ${literal(step.file)} (FORMAT parquet, COMPRESSION zstd)`,
          [],
        );
        return { kind: 'rows', rows: await this.rowsOf(read, step.file) };
      case 'hot': {
        const from = `TIMESTAMP ${literal(`${step.day} 00:00:00`)}`;
        const delta = step.since === undefined ? '' : ` AND ${changedSince(step.since)}`;
        await this.db.gate.start(
          conn,
          `COPY (SELECT * FROM events WHERE ts >= ${from} AND ts < ${from} + INTERVAL 1 DAY${delta} ORDER BY ts, ev_id)
           TO ${literal(step.file)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880,
           KV_METADATA {'logscope.backup_id': ${literal(step.backupId)}})`,
          [],
        );
        return { kind: 'rows', rows: await this.rowsOf(read, step.file) };
      }
      case 'table':
        await this.db.gate.start(
          conn,
          `COPY (SELECT * FROM ${ident(step.table)}) TO ${literal(step.file)} (FORMAT parquet, COMPRESSION zstd)`,
          [],
        );
        return { kind: 'rows', rows: await this.rowsOf(read, step.file) };
      case 'counts': {
        const params = new SqlParams(undefined, this.db.extras.columnOf);
        const counts = step.filters.map(
          (f, i) => `count(*) FILTER (WHERE coalesce((${compileFilter(f, params)}), false)) AS c${i}`,
        );
        const [row] = (
          await this.db.gate.readAll(
            conn,
            `SELECT ${['count(*) AS total', ...counts].join(', ')} FROM events`,
            params.values,
          )
        ).getRowObjectsJS();
        return {
          kind: 'counts',
          total: Number(row?.total ?? 0),
          hot: step.filters.map((_, i) => Number(row?.[`c${i}`] ?? 0)),
        };
      }
    }
  }

  /** Ends a backup: its transaction, its connection and its links. */
  async close(id: string): Promise<void> {
    const backup = this.open.get(id);
    if (!backup) return;
    this.open.delete(id);
    backup.release();
    await this.end(backup.conn, backup.holdDir);
  }

  private async end(conn: DuckDBConnection, holdDir: string | null): Promise<void> {
    try {
      await conn.run('ROLLBACK');
    } catch {
      // No transaction began, or the engine ended it.
    }
    conn.closeSync();
    if (holdDir) rmSync(holdDir, { recursive: true, force: true });
  }

  /** The hot events' days, the store's other tables and their schema, as of the snapshot. */
  private async plan(
    read: (sql: string) => Promise<Record<string, unknown>[]>,
    since: number | undefined,
  ): Promise<BackupPlan> {
    const days = await read(
      `SELECT strftime(CAST(ts AS DATE), '%Y-%m-%d') AS day, count(*) AS n FROM events${since === undefined ? '' : ` WHERE ${changedSince(since)}`} GROUP BY 1 ORDER BY 1`,
    );
    const tables = await read(
      "SELECT table_name AS name, estimated_size AS n, sql FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name",
    );
    const indexes = await read(
      'SELECT sql FROM duckdb_indexes() WHERE database_name = current_database() AND sql IS NOT NULL ORDER BY index_name',
    );
    return {
      days: days.map((r) => ({ day: String(r.day), rows: Number(r.n) })),
      tables: tables
        .filter((t) => t.name !== 'events')
        .map((t) => ({ name: String(t.name), rows: Number(t.n) })),
      schema: [...tables.map((t) => String(t.sql)), ...indexes.map((i) => String(i.sql))]
        .map((s) => (s.trimEnd().endsWith(';') ? s.trimEnd() : `${s.trimEnd()};`))
        .join('\n'),
    };
  }

  private async rowsOf(
    read: (sql: string) => Promise<Record<string, unknown>[]>,
    file: string,
  ): Promise<number> {
    const [row] = await read(`SELECT sum(num_rows) AS n FROM parquet_file_metadata(${literal(file)})`);
    return Number(row?.n ?? 0);
  }
}
