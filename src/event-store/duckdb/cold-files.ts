import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { open, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { EVENT_SCHEMA } from '../../core/event.js';
import { type AppError, unavailable } from '../../errors/errors.js';
import type { ColdFileRecord } from '../event-store.js';
import type { TimeWindow } from '../query-plan.js';
import { quoteIdent, type SqlParams } from '../sql/sql-params.js';
import { type ColdSummary, decodeGroups, encodeGroups, type RowRange, summaryBytes } from './cold-summary.js';
import { blobValue } from './duckdb-api.js';
import { MEMBERSHIP_COLUMN } from './duckdb-schema.js';

/** One committed file of the cold tier (ADR 0031). */
export type ColdFile = ColdFileRecord;

/**
 * The records of the cold tier's files, kept in the hot store's own database: a move
 * commits its record in the same transaction as the delete of the rows it moved, so at
 * every instant each event is in exactly one tier (ADR 0031). The list is held in memory
 * and changed only inside a write of the statement gate, so a statement, built while no
 * write commits, reads the files of the snapshot it reads.
 */
export class ColdFiles {
  private files: ColdFile[] = [];
  /** Each file's summary, by id (none for a file written without one). */
  private readonly summaries = new Map<number, ColdSummary>();

  private constructor(
    /** The cold directory (absolute). */
    readonly dir: string,
  ) {}

  static readonly TABLE = `CREATE TABLE IF NOT EXISTS cold_files (
    id BIGINT PRIMARY KEY, stream_id BIGINT NOT NULL, day VARCHAR NOT NULL, part INTEGER NOT NULL,
    path VARCHAR NOT NULL UNIQUE, rows BIGINT NOT NULL, bytes BIGINT NOT NULL,
    min_ts BIGINT NOT NULL, max_ts BIGINT NOT NULL, min_ev_id VARCHAR NOT NULL, max_ev_id VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL, created_at BIGINT NOT NULL,
    summary_lowering INTEGER, summary_probes INTEGER, summary_bloom BLOB, summary_patterns VARCHAR,
    summary_groups BLOB)`;

  /**
   * Opens the records and completes what a crash cut short: a file written but never
   * committed (a temporary, or a part no record names) is removed. A committed move needs
   * nothing: its record and its hot delete were one transaction.
   */
  static async open(writer: DuckDBConnection, dir: string): Promise<ColdFiles> {
    await writer.run(ColdFiles.TABLE);
    // Records made before summaries had groups: their files are read whole.
    await writer.run('ALTER TABLE cold_files ADD COLUMN IF NOT EXISTS summary_groups BLOB');
    const cold = new ColdFiles(path.resolve(dir));
    try {
      mkdirSync(cold.dir, { recursive: true, mode: 0o700 });
    } catch {
      // Unmounted or not ours: the store opens all the same; moves fail and say why
      // (logscope_cold_move_errors_total), reads of recorded files name them, health says so.
    }
    const rows = (
      await writer.runAndReadAll('SELECT * FROM cold_files ORDER BY min_ts, id')
    ).getRowObjectsJS();
    cold.files = rows.map((r) => ({
      id: Number(r.id),
      streamId: Number(r.stream_id),
      day: String(r.day),
      part: Number(r.part),
      path: String(r.path),
      rows: Number(r.rows),
      bytes: Number(r.bytes),
      minTs: Number(r.min_ts),
      maxTs: Number(r.max_ts),
      minEvId: String(r.min_ev_id),
      maxEvId: String(r.max_ev_id),
      sha256: String(r.sha256),
      createdAt: Number(r.created_at),
      summaryBytes: 0,
    }));
    const summaries = (
      await writer.runAndReadAll(
        'SELECT id, summary_lowering AS l, summary_probes AS p, summary_bloom AS b, summary_patterns AS s, summary_groups AS g FROM cold_files WHERE summary_bloom IS NOT NULL',
      )
    ).getRowObjects();
    for (const r of summaries) {
      const patterns = typeof r.s === 'string' ? (JSON.parse(r.s) as unknown[]) : null;
      cold.summaries.set(Number(r.id), {
        lowering: Number(r.l),
        probes: Number(r.p),
        bloom: (r.b as { bytes: Uint8Array }).bytes,
        patterns: patterns ? patterns.map(String) : null,
        groups: r.g ? decodeGroups((r.g as { bytes: Uint8Array }).bytes) : null,
      });
    }
    cold.files = cold.files.map((f) => ({ ...f, summaryBytes: summaryBytes(cold.summary(f)) }));
    cold.removeUncommitted();
    return cold;
  }

  /** Every committed file, oldest first. */
  all(): readonly ColdFile[] {
    return this.files;
  }

  absolute(file: Pick<ColdFile, 'path'>): string {
    return path.join(this.dir, ...file.path.split('/'));
  }

  /** The files whose time range meets `[fromMs, toMs)`. */
  meeting(range: TimeWindow): ColdFile[] {
    return this.files.filter((f) => f.minTs < range.toMs && f.maxTs >= range.fromMs);
  }

  summary(f: Pick<ColdFile, 'id'>): ColdSummary | null {
    return this.summaries.get(f.id) ?? null;
  }

  /** The files whose id range holds `evId`. */
  holding(evId: string): ColdFile[] {
    return this.files.filter((f) => f.minEvId <= evId && evId <= f.maxEvId);
  }

  /** The next part of a stream-day (parts count from 0 in each folder). */
  nextPart(streamId: number, day: string): number {
    let next = 0;
    for (const f of this.files)
      if (f.streamId === streamId && f.day === day) next = Math.max(next, f.part + 1);
    return next;
  }

  nextId(): number {
    return this.files.reduce((m, f) => Math.max(m, f.id), 0) + 1;
  }

  /** Inserts a record and its summary (inside the move's transaction). */
  static insert(writer: DuckDBConnection, f: ColdFile, summary: ColdSummary | null): Promise<unknown> {
    return writer.run(
      'INSERT INTO cold_files VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)',
      [
        f.id,
        f.streamId,
        f.day,
        f.part,
        f.path,
        f.rows,
        f.bytes,
        f.minTs,
        f.maxTs,
        f.minEvId,
        f.maxEvId,
        f.sha256,
        f.createdAt,
        summary ? summary.lowering : null,
        summary ? summary.probes : null,
        summary ? blobValue(summary.bloom) : null,
        // A JSON array of the file's pattern ids (null: more than it keeps).
        summary?.patterns ? JSON.stringify(summary.patterns) : null,
        summary?.groups ? blobValue(encodeGroups(summary.groups)) : null,
      ],
    );
  }

  /** After the move's transaction committed (inside the same gate write). */
  committed(f: ColdFile, summary: ColdSummary | null): void {
    if (summary) this.summaries.set(f.id, summary);
    this.files = [...this.files, { ...f, summaryBytes: summaryBytes(summary) }].sort(
      (a, b) => a.minTs - b.minTs || a.id - b.id,
    );
  }

  /** After retention's transaction committed: `old` gone, `by` (its rewrite) in its place. */
  replaced(old: ColdFile, by: { file: ColdFile; summary: ColdSummary | null } | null): void {
    this.files = this.files.filter((f) => f.id !== old.id);
    this.summaries.delete(old.id);
    if (by) this.committed(by.file, by.summary);
  }

  /**
   * Files in the directory that no record names (a move cut short, or a file retention
   * forgot before the server stopped), and temporaries; then the stream and day folders
   * (`<stream>/<day>/`) left empty.
   */
  private removeUncommitted(): void {
    const known = new Set(this.files.map((f) => f.path));
    const walk = (rel: string) => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = readdirSync(path.join(this.dir, rel), { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const child = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) {
          walk(child);
          if (LAYOUT_FOLDER.test(child))
            try {
              rmdirSync(path.join(this.dir, child));
            } catch {
              // Not empty: it holds files.
            }
        } else if (e.name.endsWith('.parquet.tmp') || (e.name.endsWith('.parquet') && !known.has(child)))
          try {
            rmSync(path.join(this.dir, child), { force: true });
          } catch {
            // Left for the next start; unrecorded, it is never read.
          }
      }
    };
    walk('');
  }
}

/** A folder of the layout, relative to the cold directory: `<stream id>` or `<stream id>/<YYYY-MM-DD>`. */
const LAYOUT_FOLDER = /^\d+(?:\/\d{4}-\d{2}-\d{2})?$/;

/**
 * Removes a file of the cold tier (`dir`, the cold directory, holds it), then each folder
 * it leaves empty on the way up: its day's, then its stream's (the layout is
 * `<stream>/<day>/part-<n>.parquet`), never the cold directory itself. The caller is
 * the cold tier's one writer at the time (a move's `mkdir` of the same day does not race it).
 */
export async function removeColdFile(dir: string, file: string): Promise<void> {
  await rm(file, { force: true });
  for (let folder = path.dirname(file); ; folder = path.dirname(folder)) {
    const rel = path.relative(dir, folder);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return;
    try {
      await rmdir(folder);
    } catch (err) {
      // Gone already: its parent may be empty all the same. Not empty: done.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return;
    }
  }
}

/**
 * A time as the files hold it (a UTC-adjusted timestamp), written as a constant: an
 * integer of microseconds, so the engine tests it against each row group's statistics.
 */
const utcLiteral = (ms: number) => `make_timestamp(${Math.trunc(ms) * 1000})::TIMESTAMPTZ`;

/** A file's path in SQL: a string literal (a table function takes no bound values). */
const literal = (p: string) => `'${p.replaceAll("'", "''")}'`;

/**
 * The time columns: TIMESTAMPs (UTC) in the hot table, UTC-adjusted timestamps in the
 * files. DuckDB without its ICU extension (which the store does not load) casts between
 * the two in UTC, whatever the server's zone.
 */
const TIME_COLUMNS: ReadonlySet<string> = new Set(
  EVENT_SCHEMA.filter((c) => c.type === 'time').map((c) => c.name),
);

/**
 * The files' rows in the shape of the hot table's (`SELECT *` of `events`, matched by
 * name): the schema's columns, each extra field's own column empty (a statement reads it
 * as `coalesce(column, map entry)`, and the files keep every field in the map), and the
 * stream membership `bits` under the rules the store holds, evaluated on the rows when
 * they are read.
 */
export function coldRowsSql(
  cold: ColdFiles,
  files: readonly ColdFile[],
  extraColumns: ReadonlyArray<readonly [string, string]>,
  bits: (params: SqlParams) => string,
  params: SqlParams,
  rowsOf: (f: ColdFile) => readonly RowRange[] | null = () => null,
  range?: TimeWindow,
): string {
  const columns = EVENT_SCHEMA.map((c) =>
    TIME_COLUMNS.has(c.name)
      ? `${quoteIdent(c.name)}::TIMESTAMP AS ${quoteIdent(c.name)}`
      : quoteIdent(c.name),
  );
  for (const [column] of extraColumns) columns.push(`NULL::VARCHAR AS ${quoteIdent(column)}`);
  const select = columns.join(', ');
  // The time range in the files' own type, inside each scan: a filter on the casts above
  // is the engine's to apply after reading, and made a rare word's read of 30 row groups
  // about twice as slow as with the range here (bench/notes/2026-11-28-cold-reads.md).
  const within = range ? ` AND ts >= ${utcLiteral(range.fromMs)} AND ts < ${utcLiteral(range.toMs)}` : '';
  // Files read whole in one scan; a file narrowed to some of its row groups, one scan a
  // range of its rows (DuckDB skips the row groups outside `file_row_number`'s range).
  const whole: string[] = [];
  const parts: string[] = [];
  for (const f of files) {
    const ranges = rowsOf(f);
    if (!ranges) {
      whole.push(literal(cold.absolute(f)));
      continue;
    }
    const source = `read_parquet(${literal(cold.absolute(f))}, file_row_number = true)`;
    for (const [from, to] of ranges)
      parts.push(
        `SELECT ${select} FROM ${source} WHERE file_row_number >= ${from} AND file_row_number < ${to}${within}`,
      );
  }
  if (whole.length)
    parts.unshift(`SELECT ${select} FROM read_parquet([${whole.join(', ')}]) WHERE true${within}`);
  // Every file ruled out inside: no row (the hot table's shape all the same).
  if (!parts.length)
    parts.push(
      `SELECT ${select} FROM read_parquet([${literal(cold.absolute(files[0] as ColdFile))}]) WHERE false`,
    );
  // The bits over the rows as the hot table has them (their extra columns empty).
  return `SELECT *, ${bits(params)} AS ${MEMBERSHIP_COLUMN} FROM (${parts.join(' UNION ALL ')})`;
}

/**
 * A statement that failed reading one of the cold tier's files (missing, truncated,
 * unreadable): an error naming the file relative to the cold directory, never the
 * engine's text (kept as `cause`); null for any other failure.
 */
export function coldFileError(err: unknown, cold: ColdFiles): AppError | null {
  const text = err instanceof Error ? err.message : String(err);
  const at = text.indexOf(`${cold.dir}${path.sep}`);
  if (at < 0) return null;
  let end = at + cold.dir.length + 1;
  while (end < text.length && !`"'\n `.includes(text[end] as string)) end++;
  const file = text
    .slice(at + cold.dir.length + 1, end)
    .split(path.sep)
    .join('/');
  const mapped = unavailable(
    `The cold tier's file ${file} is missing or unreadable, so this query cannot answer in full; restore the file (see cold verify) or narrow the time range.`,
  );
  (mapped as Error & { cause?: unknown }).cause = err;
  return mapped;
}

/** Makes a file, or a folder's entries, durable. */
export async function fsyncPath(p: string): Promise<void> {
  const h = await open(p, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/** A file's sha256, hex, read as a stream. */
export function fileSha256(p: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(p)
      .on('data', (d) => hash.update(d))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}
